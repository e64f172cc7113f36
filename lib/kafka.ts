/**
 * The only module that imports the Kafka client. Everything else imports the
 * client and its types from here, so the client can be swapped later
 * (`@confluentinc/kafka-javascript` offers the same kafkajs-shaped API).
 */
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import type { Admin, LogEntry, Producer, ProducerConfig, RetryOptions, logCreator } from 'kafkajs';
import type { Logger } from './logger.js';

export { logLevel };

export type {
  Admin,
  Consumer,
  ConsumerConfig,
  EachBatchPayload,
  EachMessagePayload,
  IHeaders,
  Kafka,
  KafkaMessage,
  Message,
  Producer,
  ProducerRecord,
  RecordMetadata,
} from 'kafkajs';

export interface CreateKafkaOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  retry?: RetryOptions;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
}

/** Client-level retries: about a minute of capped backoff before an operation gives up. */
export const DEFAULT_KAFKA_RETRY: RetryOptions = {
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
      const { message, timestamp: _timestamp, logger: _logger, ...fields } = log as LogEntry['log'] & Record<string, unknown>;
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
  });
}

/**
 * A producer that partitions keys with murmur2 like the Java client (and so like
 * Kafka Connect): a record produced here for key K lands where Debezium put K.
 */
export function createProducer(kafka: Kafka, config: ProducerConfig = {}): Producer {
  return kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, ...config });
}

export interface TopicSpec {
  topic: string;
  numPartitions: number;
  replicationFactor?: number;
  /** Topic configs, e.g. { 'retention.ms': '604800000', 'cleanup.policy': 'delete' }. */
  configs?: Record<string, string>;
}

/**
 * Creates the topics that do not exist yet and leaves existing ones alone
 * (also when another process creates them at the same moment). Returns the names created.
 */
export async function ensureTopics(admin: Admin, topics: readonly TopicSpec[]): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  const missing = topics.filter((spec) => !existing.has(spec.topic));
  if (missing.length === 0) return [];
  await admin.createTopics({
    waitForLeaders: true,
    topics: missing.map((spec) => ({
      topic: spec.topic,
      numPartitions: spec.numPartitions,
      replicationFactor: spec.replicationFactor ?? 1,
      configEntries: Object.entries(spec.configs ?? {}).map(([name, value]) => ({ name, value })),
    })),
  });
  return missing.map((spec) => spec.topic);
}
