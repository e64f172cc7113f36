/**
 * Backlog drain: N outbox rows committed through the seat service's event writer while the
 * connector is paused; then how fast Debezium puts them on Kafka (the topic's end offsets)
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

/**
 * Debezium's rate onto Kafka, read from the broker: the topic's end offsets, asked every 20 ms,
 * from the last look that saw none of the backlog to the first that saw it all. Asking for offsets
 * costs the machine next to nothing; a consumer reading the records as they arrive would take CPU
 * from Connect, whose drain is bound by it on two cores. Made before the connector resumes.
 */
async function watchEndOffsets(ctx: BenchContext, topic: string) {
  const admin = ctx.kafka.admin();
  await admin.connect();
  const total = async (): Promise<number> =>
    (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);
  const before = await total().catch(async (error: unknown) => {
    await admin.disconnect();
    throw error;
  });
  let stopped = false;
  return {
    /**
     * Looks until `count` records past the start are on the topic: their rate, and when the last
     * was seen. Start it before the connector resumes, so that the looks see the first record come.
     */
    async drained(count: number): Promise<{ rate: number; arrivedAt: number }> {
      // From the last look that saw none of the backlog to the look that saw it all: each end is
      // off by at most one interval and one look (under 2 % at 100,000 rows, coarse at smoke scale).
      let none = performance.now();
      let all = none;
      await waitFor(
        async () => {
          if (stopped) return true;
          const seen = (await total()) - before;
          all = performance.now();
          if (seen <= 0) none = all;
          return seen >= count;
        },
        { timeoutMs: 900_000, intervalMs: 20, description: `${count} records on ${topic}` },
      );
      return { rate: count / Math.max(0.001, (all - none) / 1000), arrivedAt: Date.now() };
    },
    /** Ends the looking (the resume failed). */
    stop: () => {
      stopped = true;
    },
    close: () => admin.disconnect(),
  };
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
    const watch = await watchEndOffsets(ctx, pipeline.topics.seat);
    const resumedAt = Date.now();
    const drained = watch.drained(count);
    await pipeline.resume().catch(async (error: unknown) => {
      watch.stop();
      await drained.finally(() => watch.close());
      throw error;
    });
    const { rate, arrivedAt } = await drained.finally(() => watch.close());
    // The same backlog through a polling relay, the connector paused so the two do not compete.
    await pipeline.pause();
    const relay = await pollingRelayDrainRate(ctx, pipeline.databaseUrl, `${pipeline.connector.topicPrefix}_relay`);
    ctx.record({
      measure: `Debezium backlog drain, ${count.toLocaleString('en-US')} committed rows (the topic's end offsets, asked every 20 ms)`,
      value: rate,
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
      "backlog drain: Debezium's rate is read from the topic's end offsets (every 20 ms, from before the connector resumes to the look that sees the whole backlog). While the connector is paused Debezium goes on decoding into its queue (up to max.queue.size, 8,192), so that much of the backlog is read before the resume: about 8 % at 100,000 rows, most of it at 10,000.",
    );
    ctx.note(
      'backlog drain: the polling relay drains the same committed rows (connector paused) in batches of 500, one transaction each (lock, send with acks=all, mark), timed from its first poll to its last commit. Consumer rates run from joining the group to the last event in the inbox (polled every 50 ms); one consumer, 3 partitions consumed concurrently, consumer database on the shared cluster.',
    );
  } finally {
    await Promise.all([batchedDb.drop(), naiveDb.drop()]);
    await pipeline.teardown();
    const admin = ctx.kafka.admin();
    await admin.connect();
    await admin.deleteGroups([ctx.name('drain_batched'), ctx.name('drain_naive')]).catch(() => undefined);
    await admin.disconnect();
  }
}

export const backlogDrainScenario: Scenario = {
  name: 'backlog-drain',
  description: 'N committed outbox rows: Debezium to Kafka, then the seat availability consumer against the naive one',
  run,
};
