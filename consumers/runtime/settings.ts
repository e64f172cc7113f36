/** The settings every consumer program shares; each program adds its own to one table. */
import { LOG_LEVELS, type LogLevel } from '../../lib/logger.js';
import type { LatePolicy } from './types.js';
import { zDurationMs, zEnum, zInt, zList, zPort, zString, zUrl } from '../../lib/settings.js';
import { otlpEndpointSetting } from '../../lib/tracing.js';

const WHEN_LATE_WORDS: Record<LatePolicy, string> = {
  'dead-letter': 'it is dead-lettered with reason "deadline exceeded"',
  'keep-retrying': 'it is retried until it applies (the effect is right however late)',
};

export function consumerSettings(defaults: { groupId: string; metricsPort: string; deadlineMs: string; whenLate: LatePolicy }) {
  return {
    databaseUrl: {
      env: 'CONSUMER_DATABASE_URL',
      default: undefined,
      parser: zUrl({ protocols: ['postgres', 'postgresql'], example: 'postgres://consumers:secret@127.0.0.1:54329/stagefront_consumers' }),
      description: 'The consumer database (inbox, read models, redrives): never the seat database.',
      secret: true,
    },
    kafkaBrokers: { env: 'KAFKA_BROKERS', default: '127.0.0.1:19092', parser: zList({ minItems: 1, example: '127.0.0.1:19092' }), description: 'Kafka bootstrap brokers.' },
    registryUrl: { env: 'SCHEMA_REGISTRY_URL', default: 'http://127.0.0.1:18081/apis/ccompat/v7', parser: zUrl({ protocols: ['http', 'https'] }), description: 'Confluent-compatible schema registry API.' },
    topicPrefix: { env: 'TOPIC_PREFIX', default: 'stagefront', parser: zString({ minLength: 1, example: 'stagefront' }), description: 'Topics are <prefix>.seat and <prefix>.order, as the outbox router names them.' },
    groupId: { env: 'CONSUMER_GROUP_ID', default: defaults.groupId, parser: zString({ minLength: 1, example: defaults.groupId }), description: 'Kafka consumer group; also the consumer name in the inbox.' },
    metricsPort: { env: 'METRICS_PORT', default: defaults.metricsPort, parser: zPort(), description: 'Port of /metrics, /healthz and /readyz.' },
    metricsHost: { env: 'METRICS_HOST', default: '127.0.0.1', parser: zString({ minLength: 1, example: '0.0.0.0' }), description: 'Interface the metrics endpoint listens on.' },
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
      description: 'An event that first fails when already past its deadline (a backlog, a recovery re-emit) is retried this long before its deadline policy applies.',
    },
    deliveryLimit: {
      env: 'DELIVERY_LIMIT',
      default: '5',
      parser: zInt({ min: 1, max: 100, example: '5' }),
      description: 'Attempts of a poison record (or of one during which the process died), counted in the consumer database, before it is dead-lettered.',
    },
    retryBaseMs: { env: 'RETRY_BASE_MS', default: '200', parser: zDurationMs({ min: 1, example: '200' }), description: 'First retry delay ceiling; doubles per attempt (full jitter).' },
    retryCapMs: { env: 'RETRY_CAP_MS', default: '60000', parser: zDurationMs({ min: 1, example: '60000' }), description: 'Largest retry delay ceiling.' },
    partitionsConcurrently: { env: 'PARTITIONS_CONSUMED_CONCURRENTLY', default: '3', parser: zInt({ min: 1, max: 64, example: '3' }), description: 'Partitions processed at the same time (each in its own batch transaction).' },
    maxBytesPerPartition: { env: 'FETCH_MAX_BYTES_PER_PARTITION', default: '1048576', parser: zInt({ min: 1024, example: '1048576' }), description: 'Fetch size per partition; bounds the batch size.' },
    sessionTimeoutMs: {
      env: 'CONSUMER_SESSION_TIMEOUT_MS',
      default: '30000',
      parser: zDurationMs({ min: 6000, example: '30000' }),
      description: "How long the group waits for a member that stopped heartbeating (a killed process) before its partitions move; the broker's group.min/max.session.timeout.ms bound it.",
    },
    databasePoolSize: { env: 'CONSUMER_DATABASE_POOL_SIZE', default: '5', parser: zInt({ min: 1, max: 100, example: '5' }), description: 'Connections to the consumer database.' },
    logLevel: { env: 'LOG_LEVEL', default: 'info', parser: zEnum(LOG_LEVELS as [LogLevel, ...LogLevel[]]), description: 'pino log level.' },
    otlpEndpoint: {
      ...otlpEndpointSetting,
      description: 'OpenTelemetry collector for a span per event, linked to the seat service\'s span (OTLP HTTP/protobuf base URL; /v1/traces is appended). Empty: no spans.',
    },
  } as const;
}

export interface CommonConsumerConfig {
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
  readonly logLevel: LogLevel;
  /** OTLP base URL for traces; empty: none. */
  readonly otlpEndpoint: string;
}
