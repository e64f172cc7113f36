import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { topicFor } from '../../events/catalogue.js';
import { waitFor } from '../../lib/wait.js';
import { seatAvailabilityConsumer } from '../../consumers/seat-availability/consumer.js';
import { produceCloudEvents } from '../support/cloudevent-records.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { type SchemaIds, catalogueEvent, catalogueSchemaIds } from './helpers/catalogue-events.js';
import {
  FAST_POLICY,
  connectedProducer,
  consumerDatabase,
  createTopics,
  startTrackedConsumer,
  testKafka,
  testLogger,
  testRegistry,
} from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();

function seatStory(ids: SchemaIds) {
  const now = Date.now();
  const seat = (seatId: string) => ({
    seat_id: seatId,
    show_id: 'show-1',
    section: seatId.slice(0, 1),
    row: '1',
    seat_number: Number(seatId.slice(1)),
  });
  const held = (seatId: string, holdId: string) =>
    catalogueEvent(
      ids,
      'seatHeld',
      { ...seat(seatId), hold_id: holdId, buyer_id: 'b', held_at: now, expires_at: now + 600_000 },
      randomUUID(),
    );
  const released = (seatId: string, holdId: string) =>
    catalogueEvent(ids, 'seatReleased', { ...seat(seatId), hold_id: holdId, released_at: now }, randomUUID());
  const expired = (seatId: string, holdId: string) =>
    catalogueEvent(ids, 'seatHoldExpired', { ...seat(seatId), hold_id: holdId, expired_at: now }, randomUUID());
  const sold = (seatId: string, orderId: string) =>
    catalogueEvent(
      ids,
      'seatSold',
      { ...seat(seatId), order_id: orderId, price_cents: 4500, sold_at: now },
      randomUUID(),
    );
  const a1Held = held('A1', 'h1');
  return [
    a1Held,
    sold('A1', 'o1'),
    a1Held,
    released('A1', 'h-other'),
    held('A2', 'h2'),
    released('A2', 'h2'),
    held('A3', 'h3'),
    expired('A3', 'h3'),
    held('A3', 'h4'),
    held('A4', 'h5'),
    held('B1', 'h6'),
    sold('B1', 'o2'),
    released('B2', 'h9'),
    // A lost-slot re-emit can deliver a seat's events out of order: the older hold must not come back.
    { ...released('C1', 'h7'), time: new Date(now + 60_000).toISOString() },
    { ...held('C1', 'h7'), time: new Date(now).toISOString() },
  ];
}

describe('seat availability', () => {
  it('keeps each seat state and the available, held and sold counts per show and section', async () => {
    const name = uniqueName('seats');
    const topic = topicFor(name, 'seat');
    const kafka = testKafka(stack, name);
    const registry = testRegistry(stack);
    await createTopics(kafka, [topic], 3);
    const db = await consumerDatabase('seats');
    const ids = await catalogueSchemaIds(registry);
    const { producer, close: closeProducer } = await connectedProducer(kafka);
    const story = seatStory(ids);
    await produceCloudEvents(producer, registry, topic, story);

    const consumer = await startTrackedConsumer({
      definition: seatAvailabilityConsumer(name, name),
      kafka,
      groupId: name,
      registry,
      pool: db.pool,
      logger: testLogger(name),
      policy: FAST_POLICY,
    });
    await waitFor(
      async () =>
        (await db.pool.query('select 1 from inbox where consumer = $1', [name])).rowCount === story.length - 1,
      { timeoutMs: 30_000, description: 'every distinct event in the inbox' },
    );
    await consumer.close();

    const seats = await db.pool.query(
      'select seat_id, state, hold_id, order_id from seat_availability_seats order by seat_id',
    );
    expect(seats.rows).toEqual([
      { seat_id: 'A1', state: 'sold', hold_id: null, order_id: 'o1' },
      { seat_id: 'A2', state: 'available', hold_id: null, order_id: null },
      { seat_id: 'A3', state: 'held', hold_id: 'h4', order_id: null },
      { seat_id: 'A4', state: 'held', hold_id: 'h5', order_id: null },
      { seat_id: 'B1', state: 'sold', hold_id: null, order_id: 'o2' },
      { seat_id: 'B2', state: 'available', hold_id: null, order_id: null },
      { seat_id: 'C1', state: 'available', hold_id: null, order_id: null },
    ]);
    const sections = await db.pool.query(
      'select show_id, section, available, held, sold from seat_availability_sections order by section',
    );
    expect(sections.rows).toEqual([
      { show_id: 'show-1', section: 'A', available: 1, held: 2, sold: 1 },
      { show_id: 'show-1', section: 'B', available: 1, held: 0, sold: 1 },
      { show_id: 'show-1', section: 'C', available: 1, held: 0, sold: 0 },
    ]);
    await Promise.all([db.close(), closeProducer()]);
  });
});
