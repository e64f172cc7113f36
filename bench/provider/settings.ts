/**
 * The email provider's settings table (`npm run smtp-provider`): parsing, `--help`, `--env-example`
 * and its table in docs/configuration.md. Both servers listen on 127.0.0.1 only.
 */
import { LOG_LEVELS, type LogLevel } from '../../lib/logger.js';
import { defineSettings, zDurationMs, zEnum, zInt, zPort, type Config } from '../../lib/settings.js';

export const providerSettings = defineSettings('smtp-provider', {
  smtpPort: {
    env: 'SMTP_PROVIDER_SMTP_PORT',
    default: '0',
    parser: zPort(),
    description: 'Port of the SMTP server; the port it got is printed on the first line of stdout.',
  },
  httpPort: {
    env: 'SMTP_PROVIDER_HTTP_PORT',
    default: '0',
    parser: zPort(),
    description:
      'Port of the control API (GET /stats, GET /message-ids, POST /throttle, /delay, /reset); printed like the SMTP port.',
  },
  acceptDelayMs: {
    env: 'SMTP_PROVIDER_ACCEPT_DELAY_MS',
    default: '100',
    parser: zDurationMs({ max: 600_000, example: '100' }),
    description:
      'How long after its DATA ends each message is accepted (a timer per message: connections wait side by side).',
  },
  maxConnections: {
    env: 'SMTP_PROVIDER_MAX_CONNECTIONS',
    default: '500',
    parser: zInt({ min: 1, max: 100_000, example: '500' }),
    description: 'Connections open at once; one more is answered 421 and closed.',
  },
  throttleRate: {
    env: 'SMTP_PROVIDER_THROTTLE_RATE',
    default: '0',
    parser: zInt({ min: 0, max: 1_000_000, example: '50' }),
    description:
      'Messages per second accepted (a bucket holding one second of messages, refilled at this rate); one more is answered 451. 0 switches throttling off.',
  },
  logLevel: {
    env: 'SMTP_PROVIDER_LOG_LEVEL',
    default: 'info',
    parser: zEnum(LOG_LEVELS as [LogLevel, ...LogLevel[]]),
    description: 'Lowest log level written (to stderr; nothing is logged per message).',
  },
});

export type ProviderConfig = Config<typeof providerSettings.settings>;
