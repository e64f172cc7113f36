/**
 * Settings rows every alerting monitor has (Alertmanager, webhook, delivery), named with the
 * monitor's prefix: alertDeliverySettings('JOB_WATCHDOG') gives JOB_WATCHDOG_ALERTMANAGER_URL, …
 */
import { z } from 'zod';
import { zDurationMs, zInt, type SettingParser } from '../../lib/settings.js';

/** An http(s) URL, or empty to switch the feature off. */
function zOptionalHttpUrl(example: string): SettingParser<string> {
  const schema = z
    .string()
    .trim()
    .refine((text) => text === '' || /^https?:\/\/[^\s/]+/.test(text));
  return { schema, expected: 'an http:// or https:// URL, or empty to switch it off', example };
}

export function alertDeliverySettings<const P extends string>(prefix: P) {
  return {
    alertmanagerUrl: {
      env: `${prefix}_ALERTMANAGER_URL`,
      default: 'http://127.0.0.1:18093',
      parser: zOptionalHttpUrl('http://127.0.0.1:18093'),
      description: 'Alertmanager base URL (alerts go to /api/v2/alerts); empty switches Alertmanager delivery off.',
    },
    alertmanagerResendMs: {
      env: `${prefix}_ALERTMANAGER_RESEND_MS`,
      default: '60000',
      parser: zDurationMs({ min: 100, example: '60000' }),
      description:
        'Active alerts are sent again this often; each expires after four times the larger of this and the poll interval unless renewed.',
    },
    webhookUrl: {
      env: `${prefix}_WEBHOOK_URL`,
      default: '',
      parser: zOptionalHttpUrl('https://hooks.example.com/alerts'),
      description: 'A generic webhook that receives every alert start and end as JSON; empty switches it off.',
    },
    deliveryAttempts: {
      env: `${prefix}_DELIVERY_ATTEMPTS`,
      default: '5',
      parser: zInt({ min: 1, max: 100, example: '5' }),
      description: 'Attempts per delivery (Alertmanager or webhook) before it is logged as failed and dropped.',
    },
    deliveryTimeoutMs: {
      env: `${prefix}_DELIVERY_TIMEOUT_MS`,
      default: '5000',
      parser: zDurationMs({ min: 100, example: '5000' }),
      description: 'Time limit of one delivery attempt.',
    },
  } as const;
}
