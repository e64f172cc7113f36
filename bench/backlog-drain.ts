/**
 * Backlog drain: N outbox rows committed through the seat service's event writer while the
 * connector is paused; then how fast Debezium puts them on Kafka (first to last record timestamp)
 * and how fast the seat availability consumer applies them, against the naive consumer on the
 * same records.
 */
import type { Pool } from '../lib/postgres.js';
import { waitFor } from '../lib/wait.js';
import { startConsumer } from '../consumers/runtime/consumer.js';
import { RuntimeEvents } from '../consumers/runtime/lifecycle.js';
import { seatAvailabilityConsumer } from '../consumers/seat-availability/consumer.js';
import { type BenchContext, type Scenario, consumerDatabase } from './context.js';
import { atScale } from './scales.js';
import { startNaiveConsumer } from './naive-consumer.js';
import { pollingRelayDrainRate } from './polling-relay.js';
import { startBenchSeatPipeline } from './seat-pipeline.js';
import { writeWorkload } from './workload.js';

const PARTITIONS = 3;
const WRITE_BATCH = 1_000;
export const BENCH_POLICY = {
  deadlineMs: 60_000,
  lateRetryWindowMs: 10_000,
  deliveryLimit: 3,
  retryBaseMs: 100,
  retryCapMs: 1_000,
};

/** Reads `topic` from the beginning until `count` records arrived; their first and last record timestamps. */
async function recordTimestamps(
  ctx: BenchContext,
  topic: string,
  count: number,
): Promise<{ first: number; last: number; arrivedAt: number }> {
  const consumer = ctx.kafka.consumer({
    groupId: ctx.name('timestamps'),
    maxWaitTimeInMs: 100,
    allowAutoTopicCreation: false,
  });
  let seen = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) {
          const timestamp = Number(message.timestamp);
          first = Math.min(first, timestamp);
          last = Math.max(last, timestamp);
        }
        seen += batch.messages.length;
      },
    });
    await waitFor(() => seen >= count, {
      timeoutMs: 900_000,
      intervalMs: 50,
      description: `${count} records on ${topic}`,
    });
    return { first, last, arrivedAt: Date.now() };
  } finally {
    await consumer.disconnect();
  }
}

/** Events per second from the moment the consumer joined its group until `count` events are in its inbox. */
async function drainRate(
  pool: Pool,
  count: number,
  start: () => Promise<{ joined: Promise<void>; stop: () => Promise<void> }>,
): Promise<number> {
  const applied = async (): Promise<number> =>
    (await pool.query<{ n: number }>('select count(*)::int as n from inbox')).rows[0]?.n ?? 0;
  const running = await start();
  try {
    await running.joined;
    const started = performance.now();
    await waitFor(async () => (await applied()) >= count, {
      timeoutMs: 1_800_000,
      intervalMs: 50,
      description: `${count} events applied`,
    });
    return count / ((performance.now() - started) / 1000);
  } finally {
    await running.stop();
  }
}

async function run(ctx: BenchContext): Promise<void> {
  const count = Number(
    process.env.BENCH_BACKLOG_EVENTS ?? atScale(ctx.scale, { smoke: 600, small: 10_000, full: 100_000 }),
  );
  const naiveCount = Math.min(count, Number(process.env.BENCH_NAIVE_EVENTS ?? 20_000));
  const pipeline = await startBenchSeatPipeline(ctx, 'drain');
  const batchedDb = await consumerDatabase(ctx, 'drain_batched', PARTITIONS + 1);
  const naiveDb = await consumerDatabase(ctx, 'drain_naive', PARTITIONS + 1);
  try {
    await pipeline.pause();
    const seats = Math.ceil(count / 4);
    for (let from = 0; from < count; from += WRITE_BATCH)
      await writeWorkload(pipeline.service, { from, count: Math.min(WRITE_BATCH, count - from), seats });
    const resumedAt = Date.now();
    await pipeline.resume();
    const { first, last, arrivedAt } = await recordTimestamps(ctx, pipeline.topics.seat, count);
    // The same backlog through a polling relay, the connector paused so the two do not compete.
    await pipeline.pause();
    const relay = await pollingRelayDrainRate(ctx, pipeline.databaseUrl, `${pipeline.connector.topicPrefix}_relay`);
    ctx.record({
      measure: `Debezium backlog drain, ${count.toLocaleString('en-US')} committed rows (first → last record timestamp)`,
      value: (count - 1) / Math.max(0.001, (last - first) / 1000),
      unit: 'events/s',
      baseline: { label: 'polling relay, same rows', value: relay },
      target: '≥ 25,000 events/s',
    });
    ctx.record({
      measure: `resume → all ${count.toLocaleString('en-US')} on Kafka (wall clock, includes the task restart)`,
      value: (arrivedAt - resumedAt) / 1000,
      unit: 's',
    });
    const definition = seatAvailabilityConsumer('bench', pipeline.connector.topicPrefix);
    const batched = await drainRate(batchedDb.pool, count, async () => {
      const events = new RuntimeEvents();
      const joined = new Promise<void>((resolve) => events.on('groupJoined', () => resolve()));
      const running = await startConsumer({
        definition,
        kafka: ctx.kafka,
        groupId: ctx.name('drain_batched'),
        registry: ctx.registry,
        pool: batchedDb.pool,
        logger: ctx.logger,
        policy: BENCH_POLICY,
        partitionsConsumedConcurrently: PARTITIONS,
        events,
      });
      return { joined, stop: running.stop };
    });
    const naive = await drainRate(naiveDb.pool, naiveCount, () =>
      startNaiveConsumer({
        kafka: ctx.kafka,
        groupId: ctx.name('drain_naive'),
        registry: ctx.registry,
        pool: naiveDb.pool,
        definition,
        partitionsConsumedConcurrently: PARTITIONS,
      }),
    );
    ctx.record({
      measure: `seat availability consumer backlog drain, ${count.toLocaleString('en-US')} events`,
      value: batched,
      unit: 'events/s',
      baseline: { label: 'naive consumer', value: naive },
      target: '≥ 15,000 events/s and ≥ 10x naive',
    });
    if (naiveCount < count)
      ctx.note(
        `backlog drain: the naive consumer is timed on the first ${naiveCount.toLocaleString('en-US')} of the same records (BENCH_NAIVE_EVENTS), to keep the run short.`,
      );
    ctx.note(
      'backlog drain: the polling relay drains the same committed rows (connector paused) in batches of 500, one transaction each (lock, send with acks=all, mark), timed from its first poll to its last commit. Consumer rates run from joining the group to the last event in the inbox (polled every 50 ms); one consumer, 3 partitions consumed concurrently, consumer database on the shared cluster.',
    );
  } finally {
    await Promise.all([batchedDb.drop(), naiveDb.drop()]);
    await pipeline.teardown();
    const admin = ctx.kafka.admin();
    await admin.connect();
    await admin
      .deleteGroups([ctx.name('drain_batched'), ctx.name('drain_naive'), ctx.name('timestamps')])
      .catch(() => undefined);
    await admin.disconnect();
  }
}

export const backlogDrainScenario: Scenario = {
  name: 'backlog-drain',
  description: 'N committed outbox rows: Debezium to Kafka, then the seat availability consumer against the naive one',
  run,
};
