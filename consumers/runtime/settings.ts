/** The settings every consumer program shares; each program adds its own to one table. */
import { type KafkaSecurityConfig, kafkaSecuritySettings } from '../../lib/kafka-security.js';
import { LOG_LEVELS, type LogLevel } from '../../lib/logger.js';
import { DECODE_LIMIT_ENV, DEFAULT_DECODE_LIMITS, type DecodeLimits } from './decode-limits.js';
import { SESSION_TIMEOUT_MS } from './failure-detection.js';
import type { LatePolicy } from './types.js';
import { zDurationMs, zEnum, zInt, zList, zPort, zString, zUrl } from '../../lib/settings.js';
import { otlpEndpointSetting } from '../../lib/tracing.js';

const WHEN_LATE_WORDS: Record<LatePolicy, string> = {
  'dead-letter': 'it is dead-lettered with reason "deadline exceeded"',
  'keep-retrying': 'it is retried until it applies (the effect is right however late)',
};

/**
 * How much of a record the consumer agrees to decode; checked before anything is allocated, a
 * record over one is dead-lettered as "undecodable" with the limit and this setting named.
 */
const decodeLimitSettings = {
  maxRecordBytes: {
    env: DECODE_LIMIT_ENV.maxRecordBytes,
    default: String(DEFAULT_DECODE_LIMITS.maxRecordBytes),
    parser: zInt({ min: 1024, example: '1048576' }),
    description:
      "The largest record (key and value bytes) decoded. Default 1 MiB, Kafka's own default record size (message.max.bytes); a catalogue event takes a few hundred bytes.",
  },
  maxHeaders: {
    env: DECODE_LIMIT_ENV.maxHeaders,
    default: String(DEFAULT_DECODE_LIMITS.maxHeaders),
    parser: zInt({ min: 16, max: 10_000, example: '64' }),
    description:
      "The most headers a record may carry. A catalogue event has 10 (the router's id, the CloudEvents attributes, content-type, ce_dataschema, ce_traceparent) and 11 after a redrive (redriven_at).",
  },
  maxHeaderBytes: {
    env: DECODE_LIMIT_ENV.maxHeaderBytes,
    default: String(DEFAULT_DECODE_LIMITS.maxHeaderBytes),
    parser: zInt({ min: 1024, example: '16384' }),
    description:
      "The most bytes of a record's header names and values together. A catalogue event's headers take under 500 (ids, type, source, time, subject, the dataschema URL, a traceparent).",
  },
  maxCollectionItems: {
    env: DECODE_LIMIT_ENV.maxCollectionItems,
    default: String(DEFAULT_DECODE_LIMITS.maxCollectionItems),
    parser: zInt({ min: 1, max: 100_000_000, example: '131072' }),
    description:
      "The most array items and map entries in one event's Avro value, all its collections together. The catalogue's only collection is an order's seat_ids, and the seat service caps no order: 131072 is the most seat ids a record of 1 MiB can hold (the shortest, `x:A-1-1`, takes 8 bytes), so no order that fits a record is refused. Raise it with CONSUMER_MAX_RECORD_BYTES.",
  },
  maxStringBytes: {
    env: DECODE_LIMIT_ENV.maxStringBytes,
    default: String(DEFAULT_DECODE_LIMITS.maxStringBytes),
    parser: zInt({ min: 256, example: '65536' }),
    description:
      "The longest Avro string or bytes value (a map key too). The catalogue's longest are ids of tens of bytes and an email address (at most 254); 64 KiB leaves room for a show id or a section name of any sensible length.",
  },
  maxNestingDepth: {
    env: DECODE_LIMIT_ENV.maxNestingDepth,
    default: String(DEFAULT_DECODE_LIMITS.maxNestingDepth),
    parser: zInt({ min: 2, max: 1_000, example: '32' }),
    description:
      "How deep records, arrays and maps may nest in one Avro value (the event's record is level 1). The catalogue nests 2 deep (an order's seat_ids); a recursive schema could nest as deep as its bytes allow and overflow the decoder's stack.",
  },
} as const;

export function consumerSettings(defaults: {
  groupId: string;
  metricsPort: string;
  deadlineMs: string;
  whenLate: LatePolicy;
}) {
  return {
    databaseUrl: {
      env: 'CONSUMER_DATABASE_URL',
      default: undefined,
      parser: zUrl({
        protocols: ['postgres', 'postgresql'],
        example: 'postgres://consumers:secret@127.0.0.1:54329/stagefront_consumers',
      }),
      description: 'The consumer database (inbox, read models, redrives): never the seat database.',
      secret: true,
    },
    kafkaBrokers: {
      env: 'KAFKA_BROKERS',
      default: '127.0.0.1:19092',
      parser: zList({ minItems: 1, example: '127.0.0.1:19092' }),
      description: 'Kafka bootstrap brokers.',
    },
    ...kafkaSecuritySettings,
    registryUrl: {
      env: 'SCHEMA_REGISTRY_URL',
      default: 'http://127.0.0.1:18081/apis/ccompat/v7',
      parser: zUrl({ protocols: ['http', 'https'] }),
      description: 'Confluent-compatible schema registry API.',
    },
    topicPrefix: {
      env: 'TOPIC_PREFIX',
      default: 'stagefront',
      parser: zString({ minLength: 1, example: 'stagefront' }),
      description: 'Topics are <prefix>.seat and <prefix>.order, as the outbox router names them.',
    },
    groupId: {
      env: 'CONSUMER_GROUP_ID',
      default: defaults.groupId,
      parser: zString({ minLength: 1, example: defaults.groupId }),
      description: 'Kafka consumer group; also the consumer name in the inbox.',
    },
    metricsPort: {
      env: 'METRICS_PORT',
      default: defaults.metricsPort,
      parser: zPort(),
      description: 'Port of /metrics, /healthz and /readyz.',
    },
    metricsHost: {
      env: 'METRICS_HOST',
      default: '127.0.0.1',
      parser: zString({ minLength: 1, example: '0.0.0.0' }),
      description: 'Interface the metrics endpoint listens on.',
    },
    deadlineMs: {
      env: 'EVENT_DEADLINE_MS',
      default: defaults.deadlineMs,
      parser: zDurationMs({ min: 1000, example: defaults.deadlineMs }),
      description: `How late this consumer's effects may be (age from ce_time) before somebody has to know: an event still failing past it raises ConsumerEventPastDeadline, then ${WHEN_LATE_WORDS[defaults.whenLate]}.`,
    },
    lateRetryWindowMs: {
      env: 'LATE_RETRY_WINDOW_MS',
      default: '60000',
      parser: zDurationMs({ min: 0, example: '60000' }),
      description:
        'An event that first fails when already past its deadline (a backlog, a recovery re-emit) is retried this long before its deadline policy applies.',
    },
    deliveryLimit: {
      env: 'DELIVERY_LIMIT',
      default: '5',
      parser: zInt({ min: 1, max: 100, example: '5' }),
      description:
        'Attempts of a poison record (or of one during which the process died), counted in the consumer database, before it is dead-lettered.',
    },
    retryBaseMs: {
      env: 'RETRY_BASE_MS',
      default: '200',
      parser: zDurationMs({ min: 1, example: '200' }),
      description: 'First retry delay ceiling; doubles per attempt (full jitter).',
    },
    retryCapMs: {
      env: 'RETRY_CAP_MS',
      default: '60000',
      parser: zDurationMs({ min: 1, example: '60000' }),
      description: 'Largest retry delay ceiling.',
    },
    partitionsConcurrently: {
      env: 'PARTITIONS_CONSUMED_CONCURRENTLY',
      default: '3',
      parser: zInt({ min: 1, max: 64, example: '3' }),
      description: 'Partitions processed at the same time (each in its own batch transaction).',
    },
    maxBytesPerPartition: {
      env: 'FETCH_MAX_BYTES_PER_PARTITION',
      default: '1048576',
      parser: zInt({ min: 1024, example: '1048576' }),
      description: 'Fetch size per partition; bounds the batch size.',
    },
    sessionTimeoutMs: {
      env: 'CONSUMER_SESSION_TIMEOUT_MS',
      default: String(SESSION_TIMEOUT_MS),
      parser: zDurationMs({ min: 6000, example: String(SESSION_TIMEOUT_MS) }),
      description:
        "How long the group waits for a member that stopped heartbeating (a killed process) before its partitions move; heartbeats go every sixth of it (at most 3 s); the broker's group.min/max.session.timeout.ms bound it.",
    },
    databasePoolSize: {
      env: 'CONSUMER_DATABASE_POOL_SIZE',
      default: '5',
      parser: zInt({ min: 1, max: 100, example: '5' }),
      description: 'Connections to the consumer database.',
    },
    databaseQueryTimeoutMs: {
      env: 'CONSUMER_DATABASE_QUERY_TIMEOUT_MS',
      default: '30000',
      parser: zInt({ min: 1000, max: 600_000, example: '30000' }),
      description:
        "How long one statement to the consumer database may go unanswered before the try fails as the infrastructure's (code postgres_unanswered): the connection is dropped, the partition held and retried. A connection left half-open by a failover or a cut network cannot stall a partition for good. Migrations are not bounded by it.",
    },
    ...decodeLimitSettings,
    logLevel: {
      env: 'LOG_LEVEL',
      default: 'info',
      parser: zEnum(LOG_LEVELS as [LogLevel, ...LogLevel[]]),
      description: 'pino log level.',
    },
    otlpEndpoint: {
      ...otlpEndpointSetting,
      description:
        "OpenTelemetry collector for a span per event, linked to the seat service's span (OTLP HTTP/protobuf base URL; /v1/traces is appended). Empty: no spans.",
    },
  } as const;
}

export interface CommonConsumerConfig extends KafkaSecurityConfig {
  readonly databaseUrl: string;
  readonly kafkaBrokers: string[];
  readonly registryUrl: string;
  readonly topicPrefix: string;
  readonly groupId: string;
  readonly metricsPort: number;
  readonly metricsHost: string;
  readonly deadlineMs: number;
  readonly lateRetryWindowMs: number;
  readonly deliveryLimit: number;
  readonly retryBaseMs: number;
  readonly retryCapMs: number;
  readonly partitionsConcurrently: number;
  readonly maxBytesPerPartition: number;
  readonly sessionTimeoutMs: number;
  readonly databasePoolSize: number;
  readonly databaseQueryTimeoutMs: number;
  readonly maxRecordBytes: number;
  readonly maxHeaders: number;
  readonly maxHeaderBytes: number;
  readonly maxCollectionItems: number;
  readonly maxStringBytes: number;
  readonly maxNestingDepth: number;
  readonly logLevel: LogLevel;
  /** OTLP base URL for traces; empty: none. */
  readonly otlpEndpoint: string;
}

/** The decode limits a program's settings hand the runtime. */
export function decodeLimitsOf(config: CommonConsumerConfig): DecodeLimits {
  const { maxRecordBytes, maxHeaders, maxHeaderBytes, maxCollectionItems, maxStringBytes, maxNestingDepth } = config;
  return { maxRecordBytes, maxHeaders, maxHeaderBytes, maxCollectionItems, maxStringBytes, maxNestingDepth };
}
