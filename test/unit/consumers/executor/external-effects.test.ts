/**
 * The executor with effects that leave the building (an email), on a real Postgres and no Kafka:
 * which orders are sent, dead-lettered or left for another instance, judged by the inbox rows,
 * the sends made and the dead letters written.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processBatch } from '../../../../consumers/runtime/process-batch.js';
import { type ConsumerDefinition, TransientError, catalogueEventTypes } from '../../../../consumers/runtime/index.js';
import {
  ConsumerTestKit,
  RecordingPartitionControl,
  type TestEvent,
  type TestPostgres,
  startTestPostgres,
} from '../../../../consumers/runtime/testing/index.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

const TOPIC = 'exec.order';

/** How the test's provider answers each order: accept (the default), or fail without or after sending. */
type Answer = 'accept' | 'not started' | 'maybe sent';

function emailConsumer(sent: string[], answers: Map<string, Answer>): ConsumerDefinition {
  return {
    name: 'executor-email',
    topics: [TOPIC],
    eventTypes: catalogueEventTypes(['orderConfirmed'], 'dead-letter'),
    effects: {
      kind: 'external',
      claimAbandonedAfterMs: 600_000,
      concurrency: 4,
      perform: (event) => {
        const answer = answers.get(event.id) ?? 'accept';
        if (answer === 'not started')
          return Promise.reject(
            new TransientError('smtp_throttled', 'the gate did not start it', { details: { notPerformed: true } }),
          );
        if (answer === 'maybe sent') return Promise.reject(new TransientError('smtp_unavailable', 'timed out'));
        sent.push(event.id);
        return Promise.resolve();
      },
    },
  };
}

function orders(count: number, time?: string): TestEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    type: 'orderConfirmed',
    id: randomUUID(),
    key: `order-${randomUUID()}`,
    ...(time === undefined ? {} : { time }),
    payload: {
      order_id: `o-${i}`,
      show_id: 'exec',
      hold_id: randomUUID(),
      buyer_id: 'b1',
      buyer_email: 'b1@example.test',
      seat_ids: [`exec-A-1-${i + 1}`],
      total_cents: 4500,
      currency: 'EUR',
      confirmed_at: Date.now(),
    },
  }));
}

/** A kit whose late retry window is a minute: a failing order past its deadline is not dead-lettered in the test's try. */
async function setUp(answers = new Map<string, Answer>()) {
  const sent: string[] = [];
  const definition = emailConsumer(sent, answers);
  const database = await server.createDatabase(definition);
  const kit = new ConsumerTestKit(definition, { pool: database.pool, policy: { lateRetryWindowMs: 60_000 } });
  return { database, sent, kit };
}

const TWO_HOURS_AGO = () => new Date(Date.now() - 2 * 3_600_000).toISOString();

describe('external effects past their deadline', () => {
  it('dead-letters an order that comes past it, sends none of them, and sends the fresh ones behind', async () => {
    const { database, sent, kit } = await setUp();
    try {
      const old = orders(3, TWO_HOURS_AGO());
      const fresh = orders(2);
      const report = await kit.run([...old, ...fresh]);
      expect(report.deadLetters.map((d) => [d.eventId, d.reason])).toEqual(old.map((o) => [o.id, 'deadline exceeded']));
      expect(sent.sort()).toEqual(fresh.map((o) => o.id).sort());
      expect(report.partitions).toMatchObject([{ committedThrough: '4' }]);
      // Never claimed: a redrive claims it fresh.
      expect((await kit.inbox()).map((row) => row.eventId).sort()).toEqual(fresh.map((o) => o.id).sort());
    } finally {
      await database.close();
    }
  });

  it('counts one sent before as a duplicate, and leaves one another instance holds to the claim (never dead-lettered)', async () => {
    const answers = new Map<string, Answer>();
    const { database, sent, kit } = await setUp(answers);
    try {
      const [done, claimed] = orders(2, TWO_HOURS_AGO());
      const records = await kit.records([done!, claimed!]);
      // The inbox as two earlier deliveries left it: one sent, one claimed by a live instance a moment ago.
      await database.pool.query(
        /* sql */ `INSERT INTO inbox (consumer, event_id, event_type, source_topic, source_partition, source_offset, status, claims, claimed_at, claim_token)
           VALUES ('executor-email', $1, 'x', $3, 0, 0, 'sent', 1, now(), 'other'),
                  ('executor-email', $2, 'x', $3, 0, 1, 'claimed', 1, now(), 'other')`,
        [done!.id, claimed!.id, TOPIC],
      );
      const consumer = kit.process();
      const control = new RecordingPartitionControl(TOPIC, 0);
      await processBatch(consumer.ctx, control, records);
      await consumer.close();
      expect(consumer.deadLetters.sent).toEqual([]);
      expect(sent).toEqual([]);
      // The open claim holds the partition (claim_open) until it is stamped or abandoned.
      expect(control.committedThrough).toBeUndefined();
      expect(control.pauses).toBe(1);
    } finally {
      await database.close();
    }
  });
});

describe('claims of orders never sent', () => {
  it('are given up at once when the effect did not start, so another instance sends them without waiting', async () => {
    const answers = new Map<string, Answer>();
    const { database, sent, kit } = await setUp(answers);
    try {
      const [refused, unsure, fine] = orders(3);
      answers.set(refused!.id ?? '', 'not started');
      answers.set(unsure!.id ?? '', 'maybe sent');
      const records = await kit.records([refused!, unsure!, fine!]);
      const first = kit.process();
      await processBatch(first.ctx, new RecordingPartitionControl(TOPIC, 0), records);
      await first.close();
      expect(sent).toEqual([fine!.id]);

      // A rebalance: another instance (another claim token) gets the partition.
      answers.clear();
      const second = kit.process();
      const control = new RecordingPartitionControl(TOPIC, 0);
      await processBatch(second.ctx, control, records);
      await second.close();
      // The refused one is sent at once; the one that may have left the building waits for its claim to be abandoned.
      expect(sent.sort()).toEqual([fine!.id, refused!.id].sort());
      expect(control.pauses).toBe(1);
    } finally {
      await database.close();
    }
  });
});
