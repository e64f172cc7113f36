/** Test plumbing for consumer tests: Kafka, registry, topics, pools and consumers, all tracked by the leak guard. */
import { type Kafka, type Producer, createKafka, createProducer, ensureTopics } from '../../../lib/kafka.js';
import type { KafkaClientSecurity } from '../../../lib/kafka-security.js';
import { type LogLevel, type Logger, createLogger, isLogLevel } from '../../../lib/logger.js';
import { type Pool, createPool } from '../../../lib/postgres.js';
import { type Registry, createSchemaRegistry } from '../../../lib/schema-registry.js';
import { runMigrations } from '../../../lib/migrations.js';
import { type RunningConsumer, type StartConsumerOptions, startConsumer } from '../../../consumers/runtime/consumer.js';
import type { DeliveryPolicy } from '../../../consumers/runtime/types.js';
import { CONSUMER_MIGRATIONS } from '../../../consumers/runtime/migrations.js';
import { track } from '../../support/leak-guard.js';
import { type StackEndpoints, createTestDatabase } from '../../support/stack.js';

export function testLogger(name: string): Logger {
  const level = process.env.TEST_LOG_LEVEL ?? 'silent';
  return createLogger({ name, level: isLogLevel(level) ? (level as LogLevel) : 'silent' });
}

/** A client of the stack's Kafka; `security` (kafkaClientSecurity) reaches a secured one, without it plaintext. */
export function testKafka(stack: StackEndpoints, clientId: string, security?: KafkaClientSecurity): Kafka {
  return createKafka({
    brokers: stack.kafkaBrokers,
    clientId,
    logger: testLogger('kafkajs'),
    ...(security === undefined ? {} : { security }),
  });
}

export function testRegistry(stack: StackEndpoints): Registry {
  return createSchemaRegistry(stack.registryUrl);
}

export async function createTopics(kafka: Kafka, topics: string[], numPartitions: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await ensureTopics(
      admin,
      topics.map((topic) => ({ topic, numPartitions })),
    );
  } finally {
    await admin.disconnect();
  }
}

export async function connectedProducer(kafka: Kafka): Promise<{ producer: Producer; close: () => Promise<void> }> {
  const producer = createProducer(kafka, { allowAutoTopicCreation: false });
  await producer.connect();
  return { producer, close: track('test producer', () => producer.disconnect()) };
}

/** A fresh consumer database with the consumer migrations applied; dropped by the returned cleanup. */
export async function consumerDatabase(
  prefix: string,
): Promise<{ url: string; pool: Pool; close: () => Promise<void> }> {
  const db = await createTestDatabase(prefix);
  const pool = createPool({ connectionString: db.url, applicationName: prefix, logger: testLogger('pool'), max: 5 });
  await runMigrations({ pool, folder: CONSUMER_MIGRATIONS });
  const close = track(`consumer database ${db.name}`, async () => {
    await pool.end();
    await db.drop();
  });
  return { url: db.url, pool, close };
}

export const FAST_POLICY: DeliveryPolicy = {
  deadlineMs: 60_000,
  lateRetryWindowMs: 5_000,
  deliveryLimit: 3,
  retryBaseMs: 50,
  retryCapMs: 500,
};

/** Starts a runtime consumer in this process, tracked by the leak guard. */
export async function startTrackedConsumer(
  options: StartConsumerOptions,
): Promise<RunningConsumer & { close: () => Promise<void> }> {
  const running = await startConsumer(options);
  const close = track(`consumer ${options.definition.name}`, () => running.stop());
  return { ...running, close };
}
