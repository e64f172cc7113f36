/** Batched runtime against the naive consumer on synthetic seat events produced straight to Kafka. */
import { topicFor } from '../events/catalogue.js';
import { createProducer, ensureTopics } from '../lib/kafka.js';
import type { Pool } from '../lib/postgres.js';
import { waitFor } from '../lib/wait.js';
import { startConsumer } from '../consumers/runtime/consumer.js';
import { RuntimeEvents } from '../consumers/runtime/lifecycle.js';
import { seatAvailabilityConsumer } from '../consumers/seat-availability/consumer.js';
import { type BenchContext, type Scenario, consumerDatabase } from './context.js';
import { startNaiveConsumer } from './naive-consumer.js';
import { produceSeatEvents } from './seat-events.js';

const PARTITIONS = 3;

async function measure(pool: Pool, count: number, start: () => Promise<{ joined: Promise<void>; stop: () => Promise<void> }>): Promise<number> {
  const applied = async (): Promise<number> => (await pool.query<{ n: number }>('select count(*)::int as n from inbox')).rows[0]?.n ?? 0;
  const running = await start();
  try {
    await running.joined;
    const started = performance.now();
    await waitFor(async () => (await applied()) === count, { timeoutMs: 600_000, intervalMs: 10, description: `all ${count} events applied` });
    return count / ((performance.now() - started) / 1000);
  } finally {
    await running.stop();
  }
}

async function run(ctx: BenchContext): Promise<void> {
  const count = ctx.scale === 'small' ? 3_000 : 10_000;
  const topic = topicFor(ctx.runId, 'seat');
  const admin = ctx.kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [{ topic, numPartitions: PARTITIONS }]);
  const producer = createProducer(ctx.kafka);
  await producer.connect();
  await produceSeatEvents(producer, ctx.registry, topic, count, 600);
  await producer.disconnect();
  const definition = seatAvailabilityConsumer('bench', ctx.runId);
  const batchedDb = await consumerDatabase(ctx, 'batched', PARTITIONS + 1);
  const naiveDb = await consumerDatabase(ctx, 'naive', PARTITIONS + 1);
  try {
    const policy = { deadlineMs: 60_000, lateRetryWindowMs: 10_000, deliveryLimit: 3, retryBaseMs: 100, retryCapMs: 1_000 };
    const batched = await measure(batchedDb.pool, count, async () => {
      const events = new RuntimeEvents();
      const joined = new Promise<void>((resolve) => events.on('groupJoined', () => resolve()));
      const running = await startConsumer({ definition, kafka: ctx.kafka, groupId: ctx.name('batched'), registry: ctx.registry, pool: batchedDb.pool, logger: ctx.logger, policy, partitionsConsumedConcurrently: PARTITIONS, events });
      return { joined, stop: running.stop };
    });
    const naive = await measure(naiveDb.pool, count, () => startNaiveConsumer({ kafka: ctx.kafka, groupId: ctx.name('naive'), registry: ctx.registry, pool: naiveDb.pool, definition, partitionsConsumedConcurrently: PARTITIONS }));
    ctx.record({ measure: `seat availability, ${count} events produced to Kafka`, value: batched, unit: 'events/s', baseline: { label: 'naive consumer', value: naive }, target: '≥ 10x naive' });
  } finally {
    await Promise.all([batchedDb.drop(), naiveDb.drop()]);
    await admin.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => undefined);
    await admin.deleteGroups([ctx.name('batched'), ctx.name('naive')]).catch(() => undefined);
    await admin.disconnect();
  }
}

export const consumersScenario: Scenario = { name: 'consumers', description: 'batched runtime against the naive consumer, synthetic events', run };
