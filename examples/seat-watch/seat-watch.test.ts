/** Seat watch with the runtime's test kit: real Postgres, the real processing code, no Kafka and no stack. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConsumerTestKit, type TestPostgres, startTestPostgres } from '../../consumers/runtime/testing/index.js';
import { seatWatchConsumer } from './consumer.js';

const definition = seatWatchConsumer({ groupId: 'seat-watch', topicPrefix: 'test', sections: ['A'] });
const now = Date.now();
const seat = { show_id: 'show-1', section: 'A', hold_id: 'h1' };
const held = (seatId: string, section = 'A') => ({
  type: 'seatHeld',
  payload: { ...seat, seat_id: seatId, section, buyer_id: 'b1', held_at: now, expires_at: now + 600_000 },
});

let postgres: TestPostgres;
beforeAll(async () => (postgres = await startTestPostgres()), 60_000);
afterAll(() => postgres.stop());

it('counts each seat event once per show and section, skips other sections, and a redelivery changes nothing', async () => {
  const database = await postgres.createDatabase(definition);
  try {
    const kit = new ConsumerTestKit(definition, { pool: database.pool });
    const records = await kit.records([
      held('A-1-1'),
      held('A-1-2'),
      held('B-1-1', 'B'),
      { type: 'seatReleased', payload: { ...seat, seat_id: 'A-1-2', released_at: now } },
      { type: 'seatSold', payload: { ...seat, seat_id: 'A-1-1', order_id: 'o1', price_cents: 5000, sold_at: now } },
    ]);
    const counts = async () =>
      (
        await database.pool.query(
          'SELECT show_id, section, held::int, hold_ended::int, sold::int FROM seat_watch.show_activity',
        )
      ).rows;

    const first = await kit.run(records);
    expect(first.applied).toHaveLength(5);
    expect(first.deadLetters).toEqual([]);
    expect(first.partitions).toMatchObject([{ committedThrough: '4' }]);
    expect(await counts()).toEqual([{ show_id: 'show-1', section: 'A', held: 2, hold_ended: 1, sold: 1 }]);

    const again = await kit.run(records);
    expect(again.duplicates).toBe(5);
    expect(await counts()).toEqual([{ show_id: 'show-1', section: 'A', held: 2, hold_ended: 1, sold: 1 }]);
  } finally {
    await database.close();
  }
});
