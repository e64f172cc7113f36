/**
 * Settings of `npm run bench` that come from a settings table: how it reaches Kafka. The bench
 * creates topics and groups of its own for every run and starts consumers and the rehearsal,
 * which read the same settings, so its user needs the rights of all of them (the stack's admin).
 */
import { kafkaSecuritySettings } from '../lib/kafka-security.js';
import { defineSettings } from '../lib/settings.js';

export const benchSettings = defineSettings('bench', { ...kafkaSecuritySettings });
