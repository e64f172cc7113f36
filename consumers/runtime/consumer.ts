/**
 * The consumer runtime on kafkajs: eachBatch with partitions consumed concurrently, autoCommit
 * off (offsets are committed by the processing code after the consumer-database transaction),
 * retry waits as paused partitions (partition-state.ts), and a stop that clears them and lets the
 * running batches finish or give up uncommitted.
 */
import { randomUUID } from 'node:crypto';
import { deadLetterTopicFor } from '../../events/catalogue.js';
import {
  type Admin,
  type Consumer,
  type EachBatchPayload,
  type Kafka,
  type Producer,
  createProducer,
  ensureTopics,
} from '../../lib/kafka.js';
import { PipelineError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import type { Pool } from '../../lib/postgres.js';
import type { Registry } from '../../lib/schema-registry.js';
import { AttemptCounts } from './delivery-attempts.js';
import { processBatch, releaseHold } from './process-batch.js';
import type { ProcessingContext } from './context.js';
import { type DecodeLimits, decodeLimitsWith } from './decode-limits.js';
import { heartbeatIntervalMs, SESSION_TIMEOUT_MS } from './failure-detection.js';
import { RuntimeEvents } from './lifecycle.js';
import { warmUp } from './warm-up.js';
import { partitionControl } from './partition-control.js';
import { PartitionStates } from './partition-state.js';
import type { ConsumerDefinition, DeliveryPolicy, SourceRecord } from './types.js';

export interface StartConsumerOptions {
  definition: ConsumerDefinition;
  kafka: Kafka;
  groupId: string;
  registry: Registry;
  pool: Pool;
  logger: Logger;
  policy: DeliveryPolicy;
  partitionsConsumedConcurrently?: number;
  /** Fetch size per partition; smaller means smaller batches. */
  maxBytesPerPartition?: number;
  /** How long the group waits for a member that stopped heartbeating (a killed process). Default SESSION_TIMEOUT_MS. */
  sessionTimeoutMs?: number;
  /** Where a group without committed offsets starts. Default: the beginning. */
  fromBeginning?: boolean;
  /** How much of a record is decoded (checked before anything is allocated); the defaults for any left out. */
  decodeLimits?: Partial<DecodeLimits>;
  /** Pass one in to subscribe (metrics, tests) before the first batch. */
  events?: RuntimeEvents;
}

export interface RunningConsumer {
  events: RuntimeEvents;
  /** Joined its group and not crashed. */
  isReady(): boolean;
  /** Not crashed for good. */
  isHealthy(): boolean;
  /** Stops taking batches, abandons retry waits, disconnects. Safe to call twice. */
  stop(): Promise<void>;
}

export const DEAD_LETTER_RETENTION_MS = String(30 * 24 * 3_600_000);

/**
 * Refuses to start on a topic that does not exist, naming it and the fix, rather than with Kafka's
 * "This server does not host this topic-partition" from inside the group join.
 */
async function requireTopics(admin: Admin, topics: readonly string[]): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = topics.filter((topic) => !existing.has(topic));
  if (missing.length > 0)
    throw new PipelineError(
      'topic_missing',
      `topic ${missing.join(', ')} does not exist on this Kafka: the event topics (<TOPIC_PREFIX>.seat, <TOPIC_PREFIX>.order) are created when the outbox connector is applied (npm run connector -- apply; npm run rehearsal applies it). Apply it, or check TOPIC_PREFIX and KAFKA_BROKERS.`,
    );
}

async function ensureDeadLetterTopics(kafka: Kafka, topics: readonly string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await requireTopics(admin, topics);
    await ensureTopics(
      admin,
      topics.map((topic) => ({
        topic: deadLetterTopicFor(topic),
        numPartitions: 1,
        configs: { 'retention.ms': DEAD_LETTER_RETENTION_MS },
      })),
    );
  } finally {
    await admin.disconnect();
  }
}

function sourceRecords(payload: EachBatchPayload): SourceRecord[] {
  const { topic, partition, messages } = payload.batch;
  return messages.map((m) => ({
    topic,
    partition,
    offset: m.offset,
    key: m.key,
    value: m.value,
    headers: m.headers ?? {},
    timestamp: m.timestamp,
  }));
}

function watchGroupState(
  consumer: Consumer,
  events: RuntimeEvents,
  logger: Logger,
  partitions: PartitionStates,
): { ready: () => boolean; healthy: () => boolean } {
  let joined = false;
  let crashed = false;
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    joined = true;
    // The assignment may have changed and fetching starts from the committed offsets again: every
    // partition's first group may be a redelivery now, and no hold survives (paused ones resume).
    partitions.dropAll();
    events.emit('groupJoined', { memberId: payload.memberId });
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    logger.error(
      { err: payload.error, restart: payload.restart },
      payload.restart ? 'consumer crashed; kafkajs restarts it' : 'consumer crashed for good',
    );
    if (!payload.restart) crashed = true;
    joined = false;
    events.emit('crashed', { error: payload.error, restart: payload.restart });
  });
  consumer.on(consumer.events.REBALANCING, () => {
    joined = false;
  });
  return { ready: () => joined && !crashed, healthy: () => !crashed };
}

async function connectProducer(kafka: Kafka): Promise<Producer> {
  const producer = createProducer(kafka, { allowAutoTopicCreation: false });
  await producer.connect();
  return producer;
}

export async function startConsumer(options: StartConsumerOptions): Promise<RunningConsumer> {
  const { definition, kafka, logger } = options;
  const events = options.events ?? new RuntimeEvents();
  await ensureDeadLetterTopics(kafka, definition.topics);
  const producer = await connectProducer(kafka);
  const sessionTimeout = options.sessionTimeoutMs ?? SESSION_TIMEOUT_MS;
  const consumer = kafka.consumer({
    groupId: options.groupId,
    maxBytesPerPartition: options.maxBytesPerPartition ?? 1_048_576,
    allowAutoTopicCreation: false,
    sessionTimeout,
    heartbeatInterval: heartbeatIntervalMs(sessionTimeout),
    // A resumed partition waits for the fetch in flight; with every partition idle or held that
    // is an empty fetch, which the broker answers after this long (kafkajs's default is 5 s).
    maxWaitTimeInMs: 1_000,
  });
  // Releases need the context built below; they run only after a join or at stop.
  const partitions = new PartitionStates((held) => releaseHold(ctx, held));
  const state = watchGroupState(consumer, events, logger, partitions);
  const stopping = new AbortController();
  const ctx: ProcessingContext = {
    definition,
    groupId: options.groupId,
    registry: options.registry,
    pool: options.pool,
    attempts: new AttemptCounts(options.pool),
    producer,
    logger,
    policy: options.policy,
    decodeLimits: decodeLimitsWith(options.decodeLimits),
    events,
    claimToken: randomUUID(),
    performedNotStamped: new Set(),
    partitions,
  };
  const concurrency = options.partitionsConsumedConcurrently ?? 3;
  await warmUp(definition, options.registry, options.pool, concurrency, logger);
  await consumer.connect();
  await consumer.subscribe({ topics: [...definition.topics], fromBeginning: options.fromBeginning ?? true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: concurrency,
    eachBatch: async (payload) => {
      const started = Date.now();
      const records = sourceRecords(payload);
      await processBatch(ctx, partitionControl(payload, stopping.signal, events, logger), records);
      events.emit('batchFinished', {
        topic: payload.batch.topic,
        partition: payload.batch.partition,
        size: records.length,
        durationMs: Date.now() - started,
      });
    },
  });
  let stopped: Promise<void> | undefined;
  return {
    events,
    isReady: state.ready,
    isHealthy: state.healthy,
    stop: () => {
      stopped ??= (async () => {
        stopping.abort();
        await partitions.close(); // no timer left; held attempts taken back
        await consumer.disconnect();
        await producer.disconnect();
      })();
      return stopped;
    },
  };
}
