/**
 * `npm run bench`: events per second through the consumer runtime (batched inbox, one transaction
 * per partition batch) against a naive consumer (one transaction per message), on the same seat
 * events, in the same run, against the running stack. BENCH_EVENTS sets the volume (default 3000).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { topicFor } from '../events/catalogue.js';
import { createKafka, createProducer, ensureTopics } from '../lib/kafka.js';
import { createLogger } from '../lib/logger.js';
import { runMigrations } from '../lib/migrations.js';
import { type Pool, createPool } from '../lib/postgres.js';
import { createSchemaRegistry } from '../lib/schema-registry.js';
import { waitFor } from '../lib/wait.js';
import { startConsumer } from '../consumers/runtime/consumer.js';
import { RuntimeEvents } from '../consumers/runtime/lifecycle.js';
import { CONSUMER_MIGRATIONS } from '../consumers/runtime/migrations.js';
import { seatAvailabilityConsumer } from '../consumers/seat-availability/consumer.js';
import { stackEndpoints, stackLayout } from '../stack/config.js';
import { startNaiveConsumer } from './naive-consumer.js';
import { produceSeatEvents } from './seat-events.js';

const EVENTS_TO_RUN = Number(process.env.BENCH_EVENTS ?? 3000);
const PARTITIONS = 3;
const stack = stackEndpoints(stackLayout());
const logger = createLogger({ name: 'bench', level: 'warn' });
const runId = `bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;

async function adminSql(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: stack.postgresAdminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function freshDatabase(label: string): Promise<{ pool: Pool; drop: () => Promise<void> }> {
  const name = `${runId}_${label}`;
  await adminSql(`create database ${pg.escapeIdentifier(name)}`);
  const pool = createPool({ connectionString: stack.postgresAdminUrl.replace(/\/postgres$/, `/${name}`), applicationName: `bench-${label}`, logger, max: PARTITIONS + 1 });
  await runMigrations({ pool, folder: CONSUMER_MIGRATIONS });
  return { pool, drop: async () => { await pool.end(); await adminSql(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`); } };
}

/** Events per second from the moment the consumer joined its group to the last event applied. */
async function measure(pool: Pool, start: () => Promise<{ joined: Promise<void>; stop: () => Promise<void> }>): Promise<number> {
  const applied = async (): Promise<number> => (await pool.query<{ n: number }>('select count(*)::int as n from inbox')).rows[0]?.n ?? 0;
  const running = await start();
  try {
    await running.joined;
    const started = performance.now();
    await waitFor(async () => (await applied()) === EVENTS_TO_RUN, { timeoutMs: 600_000, intervalMs: 10, description: `all ${EVENTS_TO_RUN} events applied` });
    return EVENTS_TO_RUN / ((performance.now() - started) / 1000);
  } finally {
    await running.stop();
  }
}

async function main(): Promise<void> {
  const kafka = createKafka({ brokers: stack.kafkaBrokers, clientId: runId, logger });
  const registry = createSchemaRegistry(stack.registryUrl);
  const topic = topicFor(runId, 'seat');
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [{ topic, numPartitions: PARTITIONS }]);
  const producer = createProducer(kafka);
  await producer.connect();
  await produceSeatEvents(producer, registry, topic, EVENTS_TO_RUN, 600);
  await producer.disconnect();
  const definition = seatAvailabilityConsumer('bench', runId);
  const batchedDb = await freshDatabase('batched');
  const naiveDb = await freshDatabase('naive');
  try {
    const policy = { deadlineMs: 60_000, lateRetryWindowMs: 10_000, deliveryLimit: 3, retryBaseMs: 100, retryCapMs: 1_000 };
    const batched = await measure(batchedDb.pool, async () => {
      const events = new RuntimeEvents();
      const joined = new Promise<void>((resolve) => events.on('groupJoined', () => resolve()));
      const running = await startConsumer({ definition, kafka, groupId: `${runId}_batched`, registry, pool: batchedDb.pool, logger, policy, partitionsConsumedConcurrently: PARTITIONS, events });
      return { joined, stop: running.stop };
    });
    const naive = await measure(naiveDb.pool, () => startNaiveConsumer({ kafka, groupId: `${runId}_naive`, registry, pool: naiveDb.pool, definition, partitionsConsumedConcurrently: PARTITIONS }));
    console.log(`${EVENTS_TO_RUN} seat events, ${PARTITIONS} partitions, seat availability handler`);
    console.log(`runtime, batched inbox (one transaction per batch): ${batched.toFixed(0)} events/s`);
    console.log(`naive consumer (one transaction per message):        ${naive.toFixed(0)} events/s`);
    console.log(`ratio batched / naive: ${(batched / naive).toFixed(1)}x`);
  } finally {
    await Promise.all([batchedDb.drop(), naiveDb.drop()]);
    await admin.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => undefined);
    await admin.deleteGroups([`${runId}_batched`, `${runId}_naive`]).catch(() => undefined);
    await admin.disconnect();
  }
}

await main();
