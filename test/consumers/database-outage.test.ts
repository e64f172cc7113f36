import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadLetterTopicFor } from '../../events/catalogue.js';
import { runMigrations } from '../../lib/migrations.js';
import { type Pool, createPool } from '../../lib/postgres.js';
import { waitFor } from '../../lib/wait.js';
import { readDeadLetters } from '../../consumers/redrive/read-dead-letters.js';
import { redrive } from '../../consumers/redrive/redrive.js';
import { RuntimeEvents } from '../../consumers/runtime/lifecycle.js';
import { CONSUMER_MIGRATIONS } from '../../consumers/runtime/migrations.js';
import type { DeliveryPolicy, LatePolicy } from '../../consumers/runtime/types.js';
import { type CloudEventRecord, produceCloudEvents, registerTestSchema } from '../support/cloudevent-records.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { COUNTED_TYPE, appliedRows, assertKeyOrder, countedConsumer, countedSchemaV1, createAppliedEventsTable } from './helpers/counted-events.js';
import { ownPostgres } from './helpers/own-postgres.js';
import { connectedProducer, createTopics, startTrackedConsumer, testKafka, testLogger, testRegistry } from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();
const postgres = ownPostgres();

beforeAll(() => postgres.start(), 120_000);
afterAll(() => postgres.stop());

async function outageScenario(prefix: string, policy: DeliveryPolicy, whenLate: LatePolicy) {
  const name = uniqueName(prefix);
  const topic = `${name}.seat`;
  const kafka = testKafka(stack, name);
  const registry = testRegistry(stack);
  await createTopics(kafka, [topic], 3);
  const db = await postgres.createDatabase(prefix);
  const pool: Pool = createPool({ connectionString: db.url, applicationName: name, logger: testLogger('pool'), max: 5, connectionTimeoutMs: 2_000 });
  const closePool = track('outage pool', async () => {
    await pool.end();
    await db.drop();
  });
  await runMigrations({ pool, folder: CONSUMER_MIGRATIONS });
  await createAppliedEventsTable(pool);
  const schemaId = await registerTestSchema(registry, `${name}.Counted`, countedSchemaV1(name));
  const { producer, close: closeProducer } = await connectedProducer(kafka);
  const events = new RuntimeEvents();
  let retries = 0;
  events.on('retry', () => (retries += 1));
  let duplicates = 0;
  events.on('duplicate', ({ count }) => (duplicates += count));
  const consumer = await startTrackedConsumer({ definition: countedConsumer(name, [topic], { whenLate }), kafka, groupId: name, registry, pool, logger: testLogger(name), policy, events });
  const counted = (key: string, seq: number): CloudEventRecord => ({ type: COUNTED_TYPE, key, schemaId, payload: { key, seq, behaviour: 'apply' } });
  await produceCloudEvents(producer, registry, topic, [counted('warm', 0)]);
  await waitFor(async () => (await appliedRows(pool, name)).length === 1, { timeoutMs: 30_000, description: 'the first event applied' });
  const batchOfTwelve = ['a', 'b', 'c'].flatMap((key) => [1, 2, 3, 4].map((seq) => counted(key, seq)));
  return {
    name, topic, kafka, pool, producer, registry, consumer, counted, batchOfTwelve,
    retries: () => retries,
    duplicates: () => duplicates,
    close: async () => {
      await consumer.close();
      await Promise.all([closeProducer(), closePool()]);
    },
  };
}

describe('the consumer database goes away', () => {
  it('applies everything, in key order, with nothing dead-lettered, when it comes back before the deadline', async () => {
    const s = await outageScenario('outage_short', { deadlineMs: 120_000, lateRetryWindowMs: 5_000, deliveryLimit: 3, retryBaseMs: 200, retryCapMs: 1_000 }, 'keep-retrying');
    await postgres.stop();
    await produceCloudEvents(s.producer, s.registry, s.topic, s.batchOfTwelve);
    await waitFor(() => s.retries() >= 4, { timeoutMs: 30_000, description: 'a few retries while the database is down' });
    await postgres.start();
    await waitFor(async () => (await appliedRows(s.pool, s.name)).length === 13, { timeoutMs: 60_000, description: 'all 13 events applied' });
    const rows = await appliedRows(s.pool, s.name);
    assertKeyOrder(rows);
    expect(new Set(rows.map((r) => r.event_id)).size).toBe(13);
    expect(await readDeadLetters(s.kafka, deadLetterTopicFor(s.topic))).toEqual([]);
    await s.close();
  });

  it('dead-letters an event type whose policy says so with "deadline exceeded" past the deadline, and a redrive applies them exactly once', async () => {
    const s = await outageScenario('outage_long', { deadlineMs: 5_000, lateRetryWindowMs: 1_000, deliveryLimit: 3, retryBaseMs: 200, retryCapMs: 1_000 }, 'dead-letter');
    await postgres.stop();
    const ids = await produceCloudEvents(s.producer, s.registry, s.topic, s.batchOfTwelve);
    const dlq = deadLetterTopicFor(s.topic);
    const dead = await waitFor(async () => {
      const found = await readDeadLetters(s.kafka, dlq);
      return found.length === 12 && found;
    }, { timeoutMs: 60_000, description: '12 dead letters' });
    expect(new Set(dead.map((d) => d.reason))).toEqual(new Set(['deadline exceeded']));
    expect(new Set(dead.map((d) => d.ceId))).toEqual(new Set(ids));
    await postgres.start();

    const options = { kafka: s.kafka, pool: s.pool, logger: testLogger('redrive'), deadLetterTopic: dlq, selection: { reasons: ['deadline exceeded'] }, ratePerSecond: 200, redrivenBy: 'test' };
    const dryRun = await redrive({ ...options, apply: false });
    expect(dryRun.redriven).toHaveLength(12);
    expect(await appliedRows(s.pool, s.name)).toHaveLength(1);
    const applied = await redrive({ ...options, apply: true });
    expect(applied.redriven).toHaveLength(12);
    await waitFor(async () => (await appliedRows(s.pool, s.name)).length === 13, { timeoutMs: 60_000, description: 'the 12 redriven events applied' });

    const second = await redrive({ ...options, apply: true });
    expect(second.redriven).toHaveLength(0);
    expect(second.skipped).toHaveLength(12);
    const forced = await redrive({ ...options, apply: true, again: true });
    expect(forced.redriven).toHaveLength(12);
    await waitFor(() => s.duplicates() >= 12, { timeoutMs: 60_000, description: 'the events redriven again skipped as duplicates' });
    const rows = await appliedRows(s.pool, s.name);
    expect(rows).toHaveLength(13);
    assertKeyOrder(rows);
    const recorded = await s.pool.query('select count(*)::int as n, sum(times)::int as times from redrives');
    expect(recorded.rows[0]).toEqual({ n: 12, times: 24 });
    await s.close();
  });
});
