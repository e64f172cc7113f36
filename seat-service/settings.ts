import { z } from 'zod';
import {
  ConfigError,
  defineSettings,
  parseSettings,
  zDurationMs,
  zInt,
  zString,
  zUrl,
  type Config,
  type SettingParser,
} from '../lib/settings.js';
import { otlpEndpointSetting } from '../lib/tracing.js';
import { connectorSettings } from '../connectors/settings.js';

const DAY_MS = 86_400_000;

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
    description:
      'Seat database as its owner: used only by setup (create the database, migrate it, give the roles their passwords).',
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
    description:
      "The same registry API as consumers reach it: every event's ce_dataschema is <this>/schemas/ids/<schema id> (empty: SCHEMA_REGISTRY_URL).",
  },
  subjectPrefix: {
    env: 'SCHEMA_SUBJECT_PREFIX',
    default: '',
    parser: zString({
      pattern: /^[A-Za-z0-9._-]*$/,
      expected: 'letters, digits, ".", "_" or "-" (or empty)',
      example: 'staging.',
    }),
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
    description:
      'OpenTelemetry collector for a span per hold, confirm, release and expiry, whose traceparent each event carries (OTLP HTTP/protobuf base URL; /v1/traces is appended). Empty: the spans are not exported (the events still carry their traceparent).',
  },
  poolSize: {
    env: 'SEAT_DB_POOL_SIZE',
    default: '20',
    parser: zInt({ min: 1, max: 200, example: '20' }),
    description: 'Connections the service keeps to the seat database.',
  },
  outboxRetentionMs: {
    env: 'OUTBOX_RETENTION_MS',
    default: String(14 * DAY_MS),
    parser: zDurationMs({ min: 60_000, example: String(14 * DAY_MS) }),
    description:
      'How long outbox rows are kept after they are written (default 14 days), the copy a recovery re-emits from: it must be longer than the event topics keep records (EVENT_TOPIC_RETENTION_MS), so that whatever Kafka still holds can still be re-emitted, and longer than lost-slot recovery looks back (RECONCILE_WINDOW_MS + SLOT_RECOVERY_SAFETY_MARGIN_MS, 7 days and 5 minutes by default), or the program refuses to start. The purge deletes a row only once it is past this, the slot has confirmed it and a clean reconciliation covered it.',
  },
  eventTopicRetentionMs: {
    env: 'EVENT_TOPIC_RETENTION_MS',
    default: String(7 * DAY_MS),
    parser: zDurationMs({ min: 60_000, example: String(7 * DAY_MS) }),
    description:
      "How long the event topics keep records: their retention.ms, or the brokers' log.retention.hours (168 h on the native stack, in docker compose and in the Kubernetes manifests). Read only to check OUTBOX_RETENTION_MS against it.",
  },
  reconcileWindowMs: {
    env: 'RECONCILE_WINDOW_MS',
    default: String(7 * DAY_MS),
    parser: zDurationMs({ min: 1000, example: String(7 * DAY_MS) }),
    description:
      'How far back npm run reconcile and the lost-slot recovery (--since auto) look for events a consumer is missing: the same variable they read. Read only to check OUTBOX_RETENTION_MS against it.',
  },
  recoveryMarginMs: {
    env: 'SLOT_RECOVERY_SAFETY_MARGIN_MS',
    default: '300000',
    parser: zDurationMs({ min: 0, example: '300000' }),
    description:
      'How much earlier than the oldest missing event the lost-slot recovery starts re-emitting: the same variable it reads. Read only to check OUTBOX_RETENTION_MS against it.',
  },
  slotName: {
    ...connectorSettings.settings.slotName,
    description:
      "The outbox connector's replication slot (its slot.name, the SLOT_NAME the connector command fills into connectors/seat-outbox.json): purge-outbox deletes only rows this slot has confirmed, and nothing while it is missing, lost, unreserved or without a reader.",
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
    description:
      "Password setup gives the stagefront_debezium role; the Connect worker must have the same value where the connector's password reference points (DEBEZIUM_DB_PASSWORD in its environment by default).",
    secret: true,
  },
});

type SeatServiceSettings = Config<typeof seatServiceSettings.settings>;

/** 604800000 → "7 days", 605100000 → "7 days 5 min". */
function duration(ms: number): string {
  const units: [number, string, string][] = [
    [DAY_MS, ' day', ' days'],
    [3_600_000, ' h', ' h'],
    [60_000, ' min', ' min'],
    [1000, ' s', ' s'],
  ];
  const parts: string[] = [];
  let left = ms;
  for (const [size, one, many] of units) {
    const count = Math.floor(left / size);
    left -= count * size;
    if (count > 0) parts.push(`${count}${count === 1 ? one : many}`);
  }
  return parts.length === 0 ? `${ms} ms` : parts.join(' ');
}

/**
 * OUTBOX_RETENTION_MS against what needs the outbox's rows: Kafka's retention (a record Kafka still
 * holds must still be re-emittable) and how far lost-slot recovery looks back. One sentence each.
 */
function retentionProblems(
  config: Pick<
    SeatServiceSettings,
    'outboxRetentionMs' | 'eventTopicRetentionMs' | 'reconcileWindowMs' | 'recoveryMarginMs'
  >,
): string[] {
  const { outboxRetentionMs, eventTopicRetentionMs, reconcileWindowMs, recoveryMarginMs } = config;
  const s = seatServiceSettings.settings;
  const retention = `${s.outboxRetentionMs.env}=${outboxRetentionMs} (${duration(outboxRetentionMs)})`;
  const needed = Math.max(eventTopicRetentionMs, reconcileWindowMs + recoveryMarginMs);
  const fix = `raise ${s.outboxRetentionMs.env} to more than ${needed} (e.g. ${Math.max(needed + DAY_MS, 14 * DAY_MS)})`;
  const problems: string[] = [];
  if (outboxRetentionMs <= eventTopicRetentionMs) {
    problems.push(
      `${retention} must be longer than ${s.eventTopicRetentionMs.env}=${eventTopicRetentionMs} (${duration(eventTopicRetentionMs)}), or events Kafka still holds could no longer be re-emitted from the outbox; ${fix}.`,
    );
  }
  if (outboxRetentionMs <= reconcileWindowMs + recoveryMarginMs) {
    problems.push(
      `${retention} must be longer than ${s.reconcileWindowMs.env} + ${s.recoveryMarginMs.env} (${duration(reconcileWindowMs + recoveryMarginMs)}), how far back lost-slot recovery re-emits; ${fix}.`,
    );
  }
  return problems;
}

/** Parses the settings and checks the outbox retention against Kafka's and recovery's; one ConfigError for all. */
export function parseSeatServiceConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
): SeatServiceSettings {
  const config = parseSettings(seatServiceSettings, env);
  const problems = retentionProblems(config);
  if (problems.length > 0) throw new ConfigError(seatServiceSettings.program, problems);
  return config;
}
