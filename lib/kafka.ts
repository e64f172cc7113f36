/**
 * The only module that imports the Kafka client (eslint refuses `kafkajs` anywhere else).
 * Everything else imports the client and its types from here, so the client can be swapped later
 * (`@confluentinc/kafka-javascript` offers the same kafkajs-shaped API).
 */
import { AssignerProtocol, Kafka, Partitioners, logLevel } from 'kafkajs';
import type { Admin, ConfigResourceTypes, LogEntry, Producer, ProducerConfig, RetryOptions, logCreator } from 'kafkajs';
import type { KafkaClientSecurity } from './kafka-security.js';
import type { Logger } from './logger.js';

export { AssignerProtocol, Kafka, Partitioners, logLevel };

export type {
  Admin,
  Consumer,
  EachBatchPayload,
  IHeaders,
  KafkaMessage,
  Message,
  Producer,
  SASLOptions,
} from 'kafkajs';

export interface CreateKafkaOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  retry?: RetryOptions;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** TLS and SASL from the program's KAFKA_SECURITY_* settings (kafkaClientSecurity); absent: plaintext. */
  security?: KafkaClientSecurity;
}

/** Client-level retries: about a minute of capped backoff before an operation gives up. */
const DEFAULT_KAFKA_RETRY: RetryOptions = {
  initialRetryTime: 300,
  maxRetryTime: 10_000,
  retries: 10,
  factor: 0.2,
  multiplier: 2,
};

type PinoMethod = 'error' | 'warn' | 'info' | 'debug';

function pinoMethod(level: logLevel): PinoMethod | undefined {
  switch (level) {
    case logLevel.ERROR:
      return 'error';
    case logLevel.WARN:
      return 'warn';
    case logLevel.INFO:
      return 'info';
    case logLevel.DEBUG:
      return 'debug';
    default:
      return undefined;
  }
}

/** The kafkajs level that lets through exactly what the pino logger would print. */
export function kafkaLogLevel(logger: Logger): logLevel {
  if (logger.isLevelEnabled('debug')) return logLevel.DEBUG;
  if (logger.isLevelEnabled('info')) return logLevel.INFO;
  if (logger.isLevelEnabled('warn')) return logLevel.WARN;
  if (logger.isLevelEnabled('error')) return logLevel.ERROR;
  return logLevel.NOTHING;
}

/** Routes kafkajs log entries into pino at the same level, with the kafkajs namespace and fields. */
export function kafkaLogCreator(logger: Logger): logCreator {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const method = pinoMethod(level);
      if (method === undefined) return;
      const {
        message,
        timestamp: _timestamp,
        logger: _logger,
        ...fields
      } = log as LogEntry['log'] & Record<string, unknown>;
      logger[method]({ kafkajs: namespace, ...fields }, message);
    };
}

export function createKafka(options: CreateKafkaOptions): Kafka {
  const { brokers, clientId, logger } = options;
  return new Kafka({
    clientId,
    brokers,
    connectionTimeout: options.connectionTimeoutMs ?? 3_000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    retry: options.retry ?? DEFAULT_KAFKA_RETRY,
    logLevel: kafkaLogLevel(logger),
    logCreator: kafkaLogCreator(logger),
    ...(options.security?.ssl === undefined ? {} : { ssl: options.security.ssl }),
    ...(options.security?.sasl === undefined ? {} : { sasl: options.security.sasl }),
  });
}

/**
 * What every producer of the project gets: idempotence (a retried request is not written twice)
 * with one request in flight per broker connection. kafkajs makes an idempotent producer's send
 * fail unless it asks for acks -1, so every send here waits for all in-sync replicas
 * (min.insync.replicas). kafkajs warns once per producer that the client's bounded retries may
 * weaken the guarantee; they are kept bounded on purpose: a send that keeps failing fails into its
 * caller, which sends the same record again (the consumer runtime) or ends the run (redrive).
 */
const PRODUCER_DEFAULTS = { idempotent: true, maxInFlightRequests: 1 } as const satisfies ProducerConfig;

/**
 * A producer that partitions keys with murmur2 like the Java client (and so like
 * Kafka Connect): a record produced here for key K lands where Debezium put K.
 * Idempotent (PRODUCER_DEFAULTS): its sends must say `acks: -1`.
 */
export function createProducer(kafka: Kafka, config: ProducerConfig = {}): Producer {
  return kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, ...PRODUCER_DEFAULTS, ...config });
}

export interface TopicSpec {
  topic: string;
  numPartitions: number;
  /** Absent or -1: the brokers' default.replication.factor (the native stack's STACK_KAFKA_REPLICATION_FACTOR). */
  replicationFactor?: number;
  /** Topic configs, e.g. { 'retention.ms': '604800000', 'cleanup.policy': 'delete' }. */
  configs?: Record<string, string>;
}

/** kafkajs's ConfigResourceTypes.BROKER (its enum is not among the exports Node's ESM loader sees). */
const BROKER_RESOURCE = 4 as ConfigResourceTypes;

/**
 * The brokers' default.replication.factor (the native stack's STACK_KAFKA_REPLICATION_FACTOR):
 * kafkajs speaks a CreateTopics version that cannot ask for the broker default (-1), so it is read.
 */
async function defaultReplicationFactor(admin: Admin): Promise<number> {
  const { brokers } = await admin.describeCluster();
  const broker = brokers[0];
  if (broker === undefined) throw new Error('the Kafka cluster lists no broker');
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: BROKER_RESOURCE, name: String(broker.nodeId), configNames: ['default.replication.factor'] }],
  });
  const value = Number(
    resources[0]?.configEntries.find((e) => e.configName === 'default.replication.factor')?.configValue,
  );
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`broker ${broker.nodeId} reports no usable default.replication.factor`);
  return value;
}

/**
 * Creates the topics that do not exist yet and leaves existing ones alone
 * (also when another process creates them at the same moment). Returns the names created.
 */
export async function ensureTopics(admin: Admin, topics: readonly TopicSpec[]): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  const missing = topics.filter((spec) => !existing.has(spec.topic));
  if (missing.length === 0) return [];
  const brokerDefault = missing.some((spec) => spec.replicationFactor === undefined || spec.replicationFactor === -1)
    ? await defaultReplicationFactor(admin)
    : undefined;
  await admin.createTopics({
    // kafkajs's own wait gives up when the broker's metadata has not caught up with the creation
    // yet (UNKNOWN_TOPIC_OR_PARTITION, seen for ~150 ms on a broker with TLS, SCRAM and ACLs).
    waitForLeaders: false,
    topics: missing.map((spec) => ({
      topic: spec.topic,
      numPartitions: spec.numPartitions,
      replicationFactor:
        spec.replicationFactor === undefined || spec.replicationFactor === -1 ? brokerDefault : spec.replicationFactor,
      configEntries: Object.entries(spec.configs ?? {}).map(([name, value]) => ({ name, value })),
    })),
  });
  await waitForTopicLeaders(
    admin,
    missing.map((spec) => spec.topic),
  );
  return missing.map((spec) => spec.topic);
}

const NOT_YET_IN_METADATA = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE']);

/** Waits until every partition of `topics` has a leader; any error but "not there yet" is thrown at once. */
async function waitForTopicLeaders(admin: Admin, topics: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { topics: described } = await admin.fetchTopicMetadata({ topics });
      if (
        described.length === topics.length &&
        described.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))
      )
        return;
    } catch (error) {
      if (!NOT_YET_IN_METADATA.has((error as { type?: string }).type ?? '')) throw error;
    }
    if (Date.now() > deadline)
      throw new Error(`the topics ${topics.join(', ')} were created but have no leaders after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
