import { z } from 'zod';
import { defineSettings, zDurationMs, zInt, zString, zUrl, type SettingParser } from '../lib/settings.js';
import { otlpEndpointSetting } from '../lib/tracing.js';

const postgresUrl = (example: string) => zUrl({ protocols: ['postgres', 'postgresql'], example });

/** An http(s) URL, or empty for "the same as another setting". */
function zOptionalUrl(example: string): SettingParser<string> {
  const url = zUrl({ protocols: ['http', 'https'], example });
  return { schema: z.union([z.literal(''), url.schema]), expected: `${url.expected}, or empty`, example };
}

export const seatServiceSettings = defineSettings('seat-service', {
  databaseUrl: {
    env: 'SEAT_DB_URL',
    default: undefined,
    parser: postgresUrl('postgres://stagefront_service:secret@db:5432/stagefront'),
    description: 'Seat database, as the seat service role (business tables and the outbox only).',
    secret: true,
  },
  adminDatabaseUrl: {
    env: 'SEAT_DB_ADMIN_URL',
    default: undefined,
    parser: postgresUrl('postgres://postgres:secret@db:5432/stagefront'),
    description: 'Seat database as its owner: used only by setup (create the database, migrate it, give the roles their passwords).',
    secret: true,
  },
  registryUrl: {
    env: 'SCHEMA_REGISTRY_URL',
    default: 'http://127.0.0.1:18081/apis/ccompat/v7',
    parser: zUrl({ example: 'http://registry:8080/apis/ccompat/v7' }),
    description: 'Confluent-compatible schema registry API (Apicurio /apis/ccompat/v7).',
  },
  registryPublicUrl: {
    env: 'SCHEMA_REGISTRY_PUBLIC_URL',
    default: '',
    parser: zOptionalUrl('https://registry.example.com/apis/ccompat/v7'),
    description: 'The same registry API as consumers reach it: every event\'s ce_dataschema is <this>/schemas/ids/<schema id> (empty: SCHEMA_REGISTRY_URL).',
  },
  subjectPrefix: {
    env: 'SCHEMA_SUBJECT_PREFIX',
    default: '',
    parser: zString({ pattern: /^[A-Za-z0-9._-]*$/, expected: 'letters, digits, ".", "_" or "-" (or empty)', example: 'staging.' }),
    description: 'Prepended to every schema subject, when several environments share one registry (empty: none).',
  },
  holdTtlMs: {
    env: 'HOLD_TTL_MS',
    default: '600000',
    parser: zDurationMs({ min: 1000, example: '600000' }),
    description: 'How long a hold keeps its seats before the sweeper expires it.',
  },
  otlpEndpoint: {
    ...otlpEndpointSetting,
    description: 'OpenTelemetry collector for a span per hold, confirm, release and expiry, whose traceparent each event carries (OTLP HTTP/protobuf base URL; /v1/traces is appended). Empty: the spans are not exported (the events still carry their traceparent).',
  },
  poolSize: {
    env: 'SEAT_DB_POOL_SIZE',
    default: '20',
    parser: zInt({ min: 1, max: 200, example: '20' }),
    description: 'Connections the service keeps to the seat database.',
  },
  outboxRetentionMs: {
    env: 'OUTBOX_RETENTION_MS',
    default: '604800000',
    parser: zDurationMs({ min: 60_000, example: '604800000' }),
    description: 'How long outbox rows are kept after they are written, for reconciliation and replay (default 7 days).',
  },
  purgeBatchSize: {
    env: 'OUTBOX_PURGE_BATCH_SIZE',
    default: '5000',
    parser: zInt({ min: 1, max: 100_000, example: '5000' }),
    description: 'Outbox rows deleted per purge transaction.',
  },
  servicePassword: {
    env: 'SEAT_SERVICE_DB_PASSWORD',
    default: undefined,
    parser: zString({ minLength: 1, example: 'a-long-random-password' }),
    description: 'Password setup gives the stagefront_service role.',
    secret: true,
  },
  debeziumPassword: {
    env: 'DEBEZIUM_DB_PASSWORD',
    default: undefined,
    parser: zString({ minLength: 1, example: 'a-long-random-password' }),
    description: 'Password setup gives the stagefront_debezium role; the Connect worker must have the same value where the connector\'s password reference points (DEBEZIUM_DB_PASSWORD in its environment by default).',
    secret: true,
  },
});
