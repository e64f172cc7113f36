import { describe, expect, it } from 'vitest';
import { EVENTS } from '../../events/catalogue.js';
import { waitFor } from '../../lib/wait.js';
import { seatId } from '../../seat-service/inventory.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { collectRecords, useSeatPipeline } from '../support/seat-pipeline.js';
import { adminQuery, requireStack } from '../support/stack.js';

requireStack();
installLeakGuard();

describe('ordering per key and buyers racing for the same seats', () => {
  const show = 'race';
  // Each test uses seats of its own: 1-11 the race, 12 the ordering, 13-14 the constraint.
  const pipeline = useSeatPipeline(show, { section: 'F', rows: 1, seatsPerRow: 14, priceCents: 12000 });

  async function buy(seat: string, buyerId: string): Promise<string> {
    const held = await pipeline().service.hold({ showId: show, seatIds: [seat], buyerId });
    if (held.status !== 'held') throw new Error(`${buyerId}: ${held.status}`);
    const confirmed = await pipeline().service.confirm({ holdId: held.holdId, buyerEmail: `${buyerId}@example.test` });
    if (confirmed.status !== 'confirmed') throw new Error(`${buyerId}: ${confirmed.status}`);
    return confirmed.orderId;
  }

  it('events with the same key arrive in commit order', async () => {
    const collector = await collectRecords([pipeline().topics.seat]);
    try {
      const seat = seatId(show, 'F', 1, 12);
      for (let round = 0; round < 5; round += 1) {
        const held = await pipeline().service.hold({ showId: show, seatIds: [seat], buyerId: `b${round}` });
        if (held.status !== 'held') throw new Error(`round ${round}: ${held.status}`);
        await pipeline().service.release(held.holdId);
      }
      const committed = (await adminQuery(pipeline().adminUrl, 'select id from outbox where aggregateid = $1 order by created_at, ce_time', [seat])).rows.map((r) => r.id as string);
      expect(committed).toHaveLength(10);
      const arrived = await waitFor(() => {
        const forSeat = collector.records.filter((r) => r.key === seat);
        return forSeat.length >= 10 ? forSeat : undefined;
      }, { timeoutMs: 30_000, description: '10 events for one seat' });
      expect(new Set(arrived.map((r) => r.partition)).size).toBe(1);
      expect(arrived.map((r) => r.headers.ce_id)).toEqual(committed);
      expect(arrived.map((r) => r.headers.ce_type)).toEqual(
        Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? EVENTS.seatHeld.type : EVENTS.seatReleased.type)),
      );
    } finally {
      await collector.stop();
    }
  });

  it('many concurrent buyers: each seat sold at most once, one sale event per seat, the losers get seat_taken', async () => {
    const seats = Array.from({ length: 11 }, (_, i) => seatId(show, 'F', 1, i + 1));
    const buyers = Array.from({ length: 40 }, (_, i) => {
      const first = i % seats.length;
      return { buyerId: `buyer-${i}`, seatIds: [seats[first] ?? '', seats[(first + 1) % seats.length] ?? ''] };
    });
    const outcomes = await Promise.all(buyers.map(async (buyer) => {
      const held = await pipeline().service.hold({ showId: show, ...buyer });
      if (held.status !== 'held') return held.status;
      const confirmed = await pipeline().service.confirm({ holdId: held.holdId, buyerEmail: `${buyer.buyerId}@example.test` });
      return confirmed.status;
    }));
    expect(outcomes.filter((o) => o !== 'confirmed' && o !== 'seat_taken')).toEqual([]);
    expect(outcomes.filter((o) => o === 'seat_taken').length).toBeGreaterThan(0);

    const sold = await adminQuery(pipeline().adminUrl, 'select seat_id, count(*)::int as n from order_seats where seat_id = any($1) group by seat_id', [seats]);
    expect(sold.rows.every((r) => r.n === 1)).toBe(true);
    const soldSeats = sold.rows.map((r) => r.seat_id as string).sort();
    expect(soldSeats.length).toBe(outcomes.filter((o) => o === 'confirmed').length * 2);
    const sellsInSeatTable = await adminQuery(pipeline().adminUrl, "select count(*)::int as n from seats where seat_id = any($1) and state = 'sold'", [seats]);
    expect(sellsInSeatTable.rows[0].n).toBe(soldSeats.length);

    const collector = await collectRecords([pipeline().topics.seat]);
    try {
      const soldEvents = await waitFor(() => {
        const events = collector.records.filter((r) => r.headers.ce_type === EVENTS.seatSold.type && seats.includes(r.key));
        return events.length >= soldSeats.length ? events : undefined;
      }, { timeoutMs: 30_000, description: `${soldSeats.length} seat-sold events` });
      expect(soldEvents.map((r) => r.key).sort()).toEqual(soldSeats);
    } finally {
      await collector.stop();
    }
  });

  it('a database constraint refuses a second sale of a seat even when code is bypassed', async () => {
    const seat = seatId(show, 'F', 1, 13);
    await buy(seat, 'first-buyer');
    const otherOrder = await buy(seatId(show, 'F', 1, 14), 'second-buyer');
    await expect(
      adminQuery(pipeline().adminUrl, 'insert into order_seats (seat_id, order_id, price_cents) values ($1, $2, 1)', [seat, otherOrder]),
    ).rejects.toThrow(/duplicate key value violates unique constraint "order_seats_pkey"/);
  });
});
