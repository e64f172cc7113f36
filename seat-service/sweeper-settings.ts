/** The hold sweeper program's settings table: parsing, `--help` and `.env.example` come from it. */
import { LOG_LEVELS, type LogLevel } from '../lib/logger.js';
import { defineSettings, zDurationMs, zEnum, zInt, zPort, zString, zUrl, type Config } from '../lib/settings.js';
import { seatServiceSettings } from './settings.js';

export const holdSweeperSettings = defineSettings('hold-sweeper', {
  databaseUrl: {
    env: 'SEAT_DB_URL',
    default: undefined,
    parser: zUrl({
      protocols: ['postgres', 'postgresql'],
      example: 'postgres://stagefront_service:secret@db:5432/stagefront',
    }),
    description:
      'Seat database, as the seat service role: the sweeper expires holds and writes their outbox events, and claims its runs in job_runs.',
    secret: true,
  },
  registryUrl: {
    env: 'SCHEMA_REGISTRY_URL',
    default: 'http://127.0.0.1:18081/apis/ccompat/v7',
    parser: zUrl({ example: 'http://registry:8080/apis/ccompat/v7' }),
    description: 'Confluent-compatible schema registry API: hold-expired events are Avro.',
  },
  registryPublicUrl: {
    ...seatServiceSettings.settings.registryPublicUrl,
    description:
      'The registry API as consumers reach it, the base of the ce_dataschema of the hold-expired events (the same value as the seat service; empty: SCHEMA_REGISTRY_URL).',
  },
  subjectPrefix: {
    env: 'SCHEMA_SUBJECT_PREFIX',
    default: '',
    parser: zString({
      pattern: /^[A-Za-z0-9._-]*$/,
      expected: 'letters, digits, ".", "_" or "-" (or empty)',
      example: 'staging.',
    }),
    description: 'Prepended to every schema subject (the same value as the seat service).',
  },
  intervalMs: {
    env: 'HOLD_SWEEPER_INTERVAL_MS',
    default: '15000',
    parser: zDurationMs({ min: 100, example: '15000' }),
    description:
      'One run slot per interval, aligned to the epoch; of several sweepers exactly one runs each slot. The job watchdog must be told the same interval (JOB_WATCHDOG_JOBS).',
  },
  batchSize: {
    env: 'HOLD_SWEEPER_BATCH_SIZE',
    default: '500',
    parser: zInt({ min: 1, max: 10_000, example: '500' }),
    description: 'Due holds expired per transaction; a run repeats batches until none is due.',
  },
  metricsHost: {
    env: 'HOLD_SWEEPER_METRICS_HOST',
    default: '127.0.0.1',
    parser: zString({ minLength: 1, example: '0.0.0.0' }),
    description: 'Address the /metrics, /healthz and /readyz server listens on.',
  },
  metricsPort: {
    env: 'HOLD_SWEEPER_METRICS_PORT',
    default: '9190',
    parser: zPort(),
    description: 'Port of the /metrics, /healthz and /readyz server (0 picks a free one).',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    default: 'info',
    parser: zEnum(LOG_LEVELS as [LogLevel, ...LogLevel[]]),
    description: 'Lowest log level written.',
  },
});

export type HoldSweeperConfig = Config<typeof holdSweeperSettings.settings>;
