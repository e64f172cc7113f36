/**
 * The executor (`processBatch`) over records on a real Postgres, with a recorded partition control
 * and dead-letter producer and no Kafka (consumers/runtime/testing/): every branch of the failure
 * model that decides lost-or-doubled, seen from outside: what the inbox and the effects table
 * hold, what was committed, paused and dead-lettered. Runs without the stack (a throwaway
 * Postgres, or TEST_POSTGRES_URL).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processBatch } from '../../../../consumers/runtime/process-batch.js';
import {
  ConsumerTestKit,
  RecordingPartitionControl,
  TEST_POLICY,
  type TestDatabase,
  type TestPostgres,
  startTestPostgres,
} from '../../../../consumers/runtime/testing/index.js';
import type { LatePolicy } from '../../../../consumers/runtime/index.js';
import {
  type Faults,
  createEffectsTable,
  effectCounts,
  noFaults,
  seatEffectsConsumer,
  seatHeldEvents,
} from './seat-effects.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

/** A fresh database with the runtime's migrations and the effects table, and a kit for the seat consumer. */
async function setUp(faults: Faults, whenLate: LatePolicy = 'keep-retrying') {
  const definition = seatEffectsConsumer(faults, whenLate);
  const database: TestDatabase = await server.createDatabase(definition);
  await createEffectsTable(database.pool);
  return { database, kit: new ConsumerTestKit(definition, { pool: database.pool }) };
}

const ONCE_EACH = (ids: readonly string[]) => Object.fromEntries(ids.map((id) => [id, 1]));

describe('processBatch on real Postgres, no Kafka', () => {
  it('applies a group in one transaction and commits through its last record', async () => {
    const { database, kit } = await setUp(noFaults());
    try {
      const events = seatHeldEvents(3);
      const ids = events.map((e) => e.id ?? '');
      const report = await kit.run(events);
      expect(report.handlerCalls).toEqual([{ eventIds: ids, types: Array(3).fill('com.stagefront.seat.held') }]);
      expect(report.applied.map((row) => [row.eventId, row.offset])).toEqual(ids.map((id, i) => [id, String(i)]));
      expect(report.partitions).toMatchObject([{ committedThrough: '2', pauses: 0 }]);
      expect(report.retries).toEqual([]);
      expect(report.deadLetters).toEqual([]);
      expect(await effectCounts(database.pool)).toEqual(ONCE_EACH(ids));
    } finally {
      await database.close();
    }
  });

  it('skips a duplicate by the inbox: in one batch, and in a redelivery by a new process', async () => {
    const { database, kit } = await setUp(noFaults());
    try {
      const [first, second] = seatHeldEvents(2);
      const records = await kit.records([first!, second!, { ...first! }]); // first's ce_id twice
      const report = await kit.run(records);
      expect(report.duplicates).toBe(1);
      expect(report.partitions).toMatchObject([{ committedThrough: '2' }]);
      const redelivery = await kit.run(records);
      expect(redelivery.duplicates).toBe(3);
      expect(redelivery.applied).toEqual([]);
      expect(redelivery.handlerCalls).toEqual([]);
      expect(redelivery.partitions).toMatchObject([{ committedThrough: '2' }]);
      expect(await effectCounts(database.pool)).toEqual(ONCE_EACH([first!.id!, second!.id!]));
    } finally {
      await database.close();
    }
  });

  it('isolates poison: the group is taken apart, the good records applied, the bad one dead-lettered at the delivery limit', async () => {
    const faults = noFaults();
    const { database, kit } = await setUp(faults);
    try {
      const events = seatHeldEvents(3);
      const [good1, bad, good2] = events.map((e) => e.id ?? '');
      faults.poison.add(bad!);
      const report = await kit.run(events);
      expect(report.deadLetters).toEqual([
        {
          eventId: bad,
          reason: 'data error',
          attempts: TEST_POLICY.deliveryLimit,
          topic: 'exec.seat.dlq',
          sourceOffset: '1',
        },
      ]);
      expect(report.applied.map((row) => row.eventId)).toEqual([good1, good2]);
      expect(report.partitions).toMatchObject([{ committedThrough: '2' }]);
      expect(report.retries.length).toBeGreaterThan(0);
      expect(report.retries.every((retry) => retry.kind === 'poison')).toBe(true);
      // Tried whole once, then alone: the bad one up to the limit, each good one once.
      expect(
        report.handlerCalls.filter((call) => call.eventIds.includes(bad!) && call.eventIds.length === 1),
      ).toHaveLength(TEST_POLICY.deliveryLimit);
      expect(await effectCounts(database.pool)).toEqual(ONCE_EACH([good1!, good2!]));
    } finally {
      await database.close();
    }
  });

  it('dead-letters a record that does not decode, naming why, and applies the rest', async () => {
    const { database, kit } = await setUp(noFaults());
    try {
      const [good] = seatHeldEvents(1);
      const report = await kit.run([{ raw: { value: Buffer.from('not avro'), headers: { ce_id: 'x' } } }, good!]);
      expect(report.deadLetters).toMatchObject([{ reason: 'not a cloudevent', sourceOffset: '0' }]);
      expect(report.applied.map((row) => row.eventId)).toEqual([good!.id]);
      expect(report.partitions).toMatchObject([{ committedThrough: '1' }]);
    } finally {
      await database.close();
    }
  });

  it('holds the partition on an infrastructure failure (paused, nothing dead-lettered) and applies it on a retry', async () => {
    const faults = noFaults();
    faults.infrastructure = 2;
    const { database, kit } = await setUp(faults);
    try {
      const events = seatHeldEvents(3);
      const report = await kit.run(events);
      expect(report.retries.map((retry) => retry.kind)).toEqual(['infrastructure', 'infrastructure']);
      expect(report.failing).toHaveLength(2);
      expect(report.failing.every((f) => f.code === 'provider_unavailable' && !f.pastDeadline)).toBe(true);
      expect(report.partitions[0]?.pauses).toBe(2);
      expect(report.deadLetters).toEqual([]);
      expect(report.partitions).toMatchObject([{ committedThrough: '2' }]);
      expect(await effectCounts(database.pool)).toEqual(ONCE_EACH(events.map((e) => e.id ?? '')));
    } finally {
      await database.close();
    }
  });

  it('past its deadline, an event whose policy is dead-letter is dead-lettered as "deadline exceeded"', async () => {
    const faults = noFaults();
    faults.infrastructure = Infinity;
    const { database, kit } = await setUp(faults, 'dead-letter');
    try {
      const events = seatHeldEvents(2, { time: new Date(Date.now() - 2 * 3_600_000).toISOString() });
      const report = await kit.run(events);
      expect(report.deadLetters.map((d) => [d.eventId, d.reason])).toEqual(
        events.map((e) => [e.id, 'deadline exceeded']),
      );
      expect(report.failing.some((f) => f.pastDeadline)).toBe(true);
      expect(report.applied).toEqual([]);
      expect(report.partitions).toMatchObject([{ committedThrough: '1' }]);
    } finally {
      await database.close();
    }
  });

  it('past its deadline, an event whose policy is keep-retrying holds its partition until it applies', async () => {
    const faults = noFaults();
    faults.infrastructure = 3;
    const { database, kit } = await setUp(faults, 'keep-retrying');
    try {
      const events = seatHeldEvents(2, { time: new Date(Date.now() - 2 * 3_600_000).toISOString() });
      const report = await kit.run(events);
      expect(report.failing).toHaveLength(3);
      expect(report.failing.every((f) => f.pastDeadline)).toBe(true);
      expect(report.deadLetters).toEqual([]);
      expect(report.partitions).toMatchObject([{ committedThrough: '1' }]);
      expect(await effectCounts(database.pool)).toEqual(ONCE_EACH(events.map((e) => e.id ?? '')));
    } finally {
      await database.close();
    }
  });

  it('abandons the batch when the partition is revoked mid-batch: nothing committed, and the redelivery applies nothing twice', async () => {
    const faults = noFaults();
    const { database, kit } = await setUp(faults);
    const consumer = kit.process();
    try {
      const records = await kit.records(seatHeldEvents(3));
      const revoked = new RecordingPartitionControl(records[0]!.topic, 0);
      faults.during = () => revoked.deactivate();
      await processBatch(consumer.ctx, revoked, records);
      expect(revoked.commits).toEqual([]);
      faults.during = undefined;
      await consumer.rejoin();
      const again = new RecordingPartitionControl(records[0]!.topic, 0);
      await processBatch(consumer.ctx, again, records);
      expect(again.committedThrough).toBe('2');
      expect(await effectCounts(database.pool)).toEqual(ONCE_EACH(records.map((r) => String(r.headers.ce_id))));
    } finally {
      await consumer.close();
      await database.close();
    }
  });

  it('isolates a group redelivered after the process died in it (counted before, never finished)', async () => {
    const { database, kit } = await setUp(noFaults());
    try {
      const events = seatHeldEvents(3, { time: new Date().toISOString() });
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(new URL('crash-child.ts', import.meta.url))],
        {
          env: { ...process.env, CRASH_DATABASE_URL: database.url, CRASH_EVENTS: JSON.stringify(events) },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
      expect({ code, signal, stderr }).toEqual({ code: null, signal: 'SIGKILL', stderr: '' });
      expect(await effectCounts(database.pool)).toEqual({});

      const report = await kit.run(events);
      // Not the group again: each record alone, so a record that kills the process is found.
      expect(report.handlerCalls.map((call) => call.eventIds)).toEqual(events.map((e) => [e.id]));
      expect(report.partitions).toMatchObject([{ committedThrough: '2' }]);
      expect(report.deadLetters).toEqual([]);
      expect(await effectCounts(database.pool)).toEqual(ONCE_EACH(events.map((e) => e.id ?? '')));
    } finally {
      await database.close();
    }
  });
  it('an outage of the consumer database that spans rebalances counts nothing against a good record', async () => {
    const faults = noFaults();
    const { database, kit } = await setUp(faults);
    const { pool } = database;
    // A switch every session sees: while on, writes to the attempt counts and the effects fail as a
    // read-only database refuses them (SQLSTATE 25006), so a try's count cannot be taken back.
    await pool.query(/* sql */ `
      CREATE TABLE outage (down boolean NOT NULL); INSERT INTO outage VALUES (false);
      CREATE FUNCTION refuse_while_down() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF (SELECT down FROM outage) THEN
            RAISE EXCEPTION 'cannot execute % in a read-only transaction', TG_OP USING ERRCODE = '25006';
          END IF;
          RETURN coalesce(NEW, OLD);
        END $$;
      CREATE TRIGGER refuse_while_down BEFORE INSERT OR UPDATE OR DELETE ON delivery_attempts
        FOR EACH ROW EXECUTE FUNCTION refuse_while_down();
      CREATE TRIGGER refuse_while_down BEFORE INSERT ON effects FOR EACH ROW EXECUTE FUNCTION refuse_while_down();`);
    // The database goes down inside each of these tries (after its count was written) and stays
    // down across a rebalance; it is back before the next try. More flaps than the delivery limit.
    let flaps = TEST_POLICY.deliveryLimit + 2;
    faults.beforeWrite = async () => {
      if (flaps === 0) return;
      flaps -= 1;
      await pool.query('UPDATE outage SET down = true');
    };
    const consumer = kit.process();
    try {
      const records = await kit.records(seatHeldEvents(1));
      let committed: string | undefined;
      for (let delivery = 0; delivery < 20 && committed === undefined; delivery += 1) {
        const control = new RecordingPartitionControl(records[0]!.topic, 0);
        await processBatch(consumer.ctx, control, records);
        committed = control.committedThrough;
        if (committed !== undefined) break;
        await consumer.rejoin(); // a rebalance while the database is still down
        await pool.query('UPDATE outage SET down = false');
      }
      expect(consumer.deadLetters.sent.map((sent) => String(sent.headers.dlq_reason))).toEqual([]);
      expect(flaps).toBe(0);
      expect(committed).toBe('0');
      expect(await effectCounts(pool)).toEqual(ONCE_EACH([String(records[0]!.headers.ce_id)]));
    } finally {
      await consumer.close();
      await database.close();
    }
  });
});
