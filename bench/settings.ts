/**
 * Settings of `npm run bench` that come from a settings table: how it reaches Kafka. The bench
 * creates topics and groups of its own for every run and starts consumers and the rehearsal,
 * which read the same settings, so its user needs the rights of all of them (the stack's admin).
 */
import { kafkaSecuritySettings } from '../lib/kafka-security.js';
import { defineSettings, zEnum } from '../lib/settings.js';
import { SCALES } from './scales.js';

export const benchSettings = defineSettings('bench', {
  scale: {
    env: 'BENCH_SCALE',
    default: 'full',
    parser: zEnum(SCALES),
    description:
      'How big the scenarios run: full for the figures in docs/performance.md, small a quick version of each, smoke the least that runs every code path (the test suite runs it; its figures mean nothing).',
  },
  ...kafkaSecuritySettings,
});
