import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EVENTS } from '../../events/catalogue.js';
import { sleep, waitFor } from '../../lib/wait.js';
import { seatId } from '../../seat-service/inventory.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { collectRecords, useSeatPipeline } from '../support/seat-pipeline.js';
import { adminQuery, requireStack } from '../support/stack.js';

requireStack();
installLeakGuard();

describe('ordering per key and buyers racing for the same seats', () => {
  const show = 'race';
  // Each test uses seats of its own: row 1: 1-11 the race, 12 the ordering, 13-14 the constraint;
  // row 2 the refusals; row 3 confirm against expiry.
  const pipeline = useSeatPipeline(show, { section: 'F', rows: 3, seatsPerRow: 14, priceCents: 12000 });

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
      const committed = (
        await adminQuery(
          pipeline().adminUrl,
          'select id from outbox where aggregateid = $1 order by created_at, ce_time',
          [seat],
        )
      ).rows.map((r) => r.id as string);
      expect(committed).toHaveLength(10);
      const arrived = await waitFor(
        () => {
          const forSeat = collector.records.filter((r) => r.key === seat);
          return forSeat.length >= 10 ? forSeat : undefined;
        },
        { timeoutMs: 30_000, description: '10 events for one seat' },
      );
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
    const outcomes = await Promise.all(
      buyers.map(async (buyer) => {
        const held = await pipeline().service.hold({ showId: show, ...buyer });
        if (held.status !== 'held') return held.status;
        const confirmed = await pipeline().service.confirm({
          holdId: held.holdId,
          buyerEmail: `${buyer.buyerId}@example.test`,
        });
        return confirmed.status;
      }),
    );
    expect(outcomes.filter((o) => o !== 'confirmed' && o !== 'seat_taken')).toEqual([]);
    expect(outcomes.filter((o) => o === 'seat_taken').length).toBeGreaterThan(0);

    const sold = await adminQuery(
      pipeline().adminUrl,
      'select seat_id, count(*)::int as n from order_seats where seat_id = any($1) group by seat_id',
      [seats],
    );
    expect(sold.rows.every((r) => r.n === 1)).toBe(true);
    const soldSeats = sold.rows.map((r) => r.seat_id as string).sort();
    expect(soldSeats.length).toBe(outcomes.filter((o) => o === 'confirmed').length * 2);
    const sellsInSeatTable = await adminQuery(
      pipeline().adminUrl,
      "select count(*)::int as n from seats where seat_id = any($1) and state = 'sold'",
      [seats],
    );
    expect(sellsInSeatTable.rows[0].n).toBe(soldSeats.length);

    const collector = await collectRecords([pipeline().topics.seat]);
    try {
      const soldEvents = await waitFor(
        () => {
          const events = collector.records.filter(
            (r) => r.headers.ce_type === EVENTS.seatSold.type && seats.includes(r.key),
          );
          return events.length >= soldSeats.length ? events : undefined;
        },
        { timeoutMs: 30_000, description: `${soldSeats.length} seat-sold events` },
      );
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
      adminQuery(pipeline().adminUrl, 'insert into order_seats (seat_id, order_id, price_cents) values ($1, $2, 1)', [
        seat,
        otherOrder,
      ]),
    ).rejects.toThrow(/duplicate key value violates unique constraint "order_seats_pkey"/);
  });

  /** The outbox, the seat service's own record of every event it wrote, for some seats and orders: [aggregateid, type]. */
  async function outboxFor(ids: string[]): Promise<string[]> {
    const { rows } = await adminQuery(
      pipeline().adminUrl,
      'select aggregateid, type from outbox where aggregateid = any($1) order by created_at, ce_time',
      [ids],
    );
    return rows.map((r) => `${r.aggregateid as string} ${r.type as string}`);
  }

  /** Moves a hold's expiry, as the clock passing it would (the admin, not the service's role). */
  async function expireAt(holdId: string, sql: string): Promise<void> {
    await adminQuery(
      pipeline().adminUrl,
      `update holds set created_at = least(created_at, ${sql} - interval '1 second'), expires_at = ${sql} where hold_id = $1`,
      [holdId],
    );
  }

  it('refusals change nothing: unknown hold, unknown seat, a hold no longer active, an expired hold', async () => {
    const service = pipeline().service;
    const [a, b, c] = [1, 2, 3].map((n) => seatId(show, 'F', 2, n)) as [string, string, string];

    // An unknown hold: neither confirmed nor released, no order, no event.
    const unknown = randomUUID();
    expect(await service.confirm({ holdId: unknown, buyerEmail: 'x@example.test' })).toEqual({
      status: 'unknown_hold',
    });
    expect(await service.release(unknown)).toEqual({ status: 'unknown_hold' });

    // A seat the show does not have: the whole hold is refused, naming it, and the real seat stays free.
    const ghost = seatId(show, 'F', 9, 99);
    expect(await service.hold({ showId: show, seatIds: [a, ghost], buyerId: 'ghost' })).toEqual({
      status: 'unknown_seats',
      seatIds: [ghost],
    });
    expect(await outboxFor([a, ghost])).toEqual([]);

    // Released, then confirmed or released again: refused with the hold's status; the seat was never sold.
    const released = await service.hold({ showId: show, seatIds: [a], buyerId: 'r' });
    if (released.status !== 'held') throw new Error(released.status);
    expect((await service.release(released.holdId)).status).toBe('released');
    expect(await service.confirm({ holdId: released.holdId, buyerEmail: 'r@example.test' })).toEqual({
      status: 'hold_not_active',
      holdStatus: 'released',
    });
    expect(await service.release(released.holdId)).toEqual({ status: 'hold_not_active', holdStatus: 'released' });

    // Confirmed, then confirmed again or released: one order, one sale.
    const bought = await service.hold({ showId: show, seatIds: [b], buyerId: 'c' });
    if (bought.status !== 'held') throw new Error(bought.status);
    const order = await service.confirm({ holdId: bought.holdId, buyerEmail: 'c@example.test' });
    if (order.status !== 'confirmed') throw new Error(order.status);
    expect(await service.confirm({ holdId: bought.holdId, buyerEmail: 'c2@example.test' })).toEqual({
      status: 'hold_not_active',
      holdStatus: 'confirmed',
    });
    expect(await service.release(bought.holdId)).toEqual({ status: 'hold_not_active', holdStatus: 'confirmed' });

    // Expired but not swept yet: the buyer is refused, no order; the sweeper then frees the seat.
    const late = await service.hold({ showId: show, seatIds: [c], buyerId: 'late' });
    if (late.status !== 'held') throw new Error(late.status);
    await expireAt(late.holdId, "now() - interval '1 second'");
    expect(await service.confirm({ holdId: late.holdId, buyerEmail: 'late@example.test' })).toEqual({
      status: 'hold_expired',
    });
    expect(await service.expireDueHolds()).toBeGreaterThanOrEqual(1);
    expect(await service.confirm({ holdId: late.holdId, buyerEmail: 'late@example.test' })).toEqual({
      status: 'hold_not_active',
      holdStatus: 'expired',
    });

    const orders = await adminQuery(
      pipeline().adminUrl,
      'select order_id, hold_id from orders where hold_id = any($1)',
      [[released.holdId, bought.holdId, late.holdId, unknown]],
    );
    expect(orders.rows).toEqual([{ order_id: order.orderId, hold_id: bought.holdId }]);
    const states = await adminQuery(
      pipeline().adminUrl,
      'select seat_id, state from seats where seat_id = any($1) order by seat_id',
      [[a, b, c]],
    );
    expect(states.rows).toEqual([
      { seat_id: a, state: 'available' },
      { seat_id: b, state: 'sold' },
      { seat_id: c, state: 'available' },
    ]);
    // The events say the same, one per change and nothing for a refusal.
    expect(await outboxFor([a, b, c, order.orderId])).toEqual([
      `${a} ${EVENTS.seatHeld.type}`,
      `${a} ${EVENTS.seatReleased.type}`,
      `${b} ${EVENTS.seatHeld.type}`,
      `${b} ${EVENTS.seatSold.type}`,
      `${order.orderId} ${EVENTS.orderConfirmed.type}`,
      `${c} ${EVENTS.seatHeld.type}`,
      `${c} ${EVENTS.seatHoldExpired.type}`,
    ]);
  });

  it("a confirm racing the sweeper's expiry: each hold ends exactly one way, and the seats and events agree", async () => {
    const service = pipeline().service;
    const seats = Array.from({ length: 14 }, (_, i) => seatId(show, 'F', 3, i + 1));
    const holds = await Promise.all(
      seats.map(async (seat, i) => {
        const held = await service.hold({ showId: show, seatIds: [seat], buyerId: `racer-${i}` });
        if (held.status !== 'held') throw new Error(`${seat}: ${held.status}`);
        return { seat, holdId: held.holdId };
      }),
    );
    // Every hold runs out 420 ms from now; buyers confirm and the sweeper sweeps across that moment.
    await adminQuery(
      pipeline().adminUrl,
      "update holds set expires_at = now() + interval '420 milliseconds' where hold_id = any($1)",
      [holds.map((h) => h.holdId)],
    );
    let sweeping = true;
    const sweeper = (async () => {
      let expired = 0;
      while (sweeping) {
        expired += await service.expireDueHolds();
        await sleep(5);
      }
      return expired + (await service.expireDueHolds());
    })();
    const outcomes = await Promise.all(
      holds.map(async ({ holdId }, i) => {
        await sleep(i * 60); // confirms from well before the expiry to well after it
        return (await service.confirm({ holdId, buyerEmail: `racer-${i}@example.test` })).status;
      }),
    );
    sweeping = false;
    const expired = await sweeper;

    expect(outcomes.filter((o) => o !== 'confirmed' && o !== 'hold_expired' && o !== 'hold_not_active')).toEqual([]);
    const confirmed = outcomes.filter((o) => o === 'confirmed').length;
    // The race ran: some buyers were in time and some were not.
    expect({ confirmed: confirmed > 0, expired: expired > 0 }).toEqual({ confirmed: true, expired: true });
    expect(confirmed + expired).toBe(holds.length);
    const ended = await adminQuery(pipeline().adminUrl, 'select hold_id, status from holds where hold_id = any($1)', [
      holds.map((h) => h.holdId),
    ]);
    const orders = await adminQuery(pipeline().adminUrl, 'select hold_id from orders where hold_id = any($1)', [
      holds.map((h) => h.holdId),
    ]);
    const ordered = new Set(orders.rows.map((r) => r.hold_id as string));
    const events = await outboxFor(seats);
    for (const [i, { seat, holdId }] of holds.entries()) {
      const status = ended.rows.find((r) => r.hold_id === holdId)?.status as string;
      // Confirmed exactly when the buyer was told so, with an order; otherwise expired, with none.
      expect({ seat, status, ordered: ordered.has(holdId) }).toEqual({
        seat,
        status: outcomes[i] === 'confirmed' ? 'confirmed' : 'expired',
        ordered: outcomes[i] === 'confirmed',
      });
      const ending = status === 'confirmed' ? EVENTS.seatSold.type : EVENTS.seatHoldExpired.type;
      expect(events.filter((e) => e.startsWith(`${seat} `))).toEqual([
        `${seat} ${EVENTS.seatHeld.type}`,
        `${seat} ${ending}`,
      ]);
    }
    const states = await adminQuery(
      pipeline().adminUrl,
      "select count(*) filter (where state = 'sold')::int as sold, count(*) filter (where state = 'available')::int as available from seats where seat_id = any($1)",
      [seats],
    );
    expect(states.rows[0]).toEqual({ sold: confirmed, available: holds.length - confirmed });
  });
});
