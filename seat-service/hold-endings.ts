import { randomUUID } from 'node:crypto';
import type { Logger } from '../lib/logger.js';
import type { Pool, PoolClient } from '../lib/postgres.js';
import { withTransaction } from '../lib/postgres.js';
import type { EventWriter, PendingEvent } from './event-writer.js';
import { CONTENTION_RETRIES, placeOf } from './holds.js';

export type HoldEndResult =
  | { status: 'confirmed'; orderId: string; eventIds: string[] }
  | { status: 'released'; eventIds: string[] }
  | { status: 'unknown_hold' }
  | { status: 'hold_not_active'; holdStatus: string }
  | { status: 'hold_expired' };

/** A seat of a hold, with where it is (the seat events carry it) and its price. */
export interface HoldSeat {
  seat_id: string;
  section: string;
  row_label: string;
  seat_number: number;
  price_cents: number;
}

/** SQL: the active seats of hold `h` as a JSON array of HoldSeat, in seat id order. */
export const ACTIVE_SEATS_OF_HOLD = /* sql */ `coalesce((select json_agg(json_build_object('seat_id', s.seat_id, 'section', s.section,
                                       'row_label', s.row_label, 'seat_number', s.seat_number, 'price_cents', s.price_cents)
                                     order by s.seat_id)
                      from hold_seats hs join seats s using (seat_id)
                     where hs.hold_id = h.hold_id and hs.active), '[]')`;

interface ActiveHold {
  hold_id: string;
  show_id: string;
  buyer_id: string;
  status: string;
  expired: boolean;
  seats: HoldSeat[];
}

/** Locks a hold and its active seats; undefined when there is no such hold. */
async function lockHold(client: PoolClient, holdId: string): Promise<ActiveHold | undefined> {
  const { rows } = await client.query<ActiveHold>(
    /* sql */ `select h.hold_id, h.show_id, h.buyer_id, h.status, h.expires_at <= now() as expired,
        ${ACTIVE_SEATS_OF_HOLD} as seats
       from holds h where h.hold_id = $1 for update of h`,
    [holdId],
  );
  return rows[0];
}

function refusal(hold: ActiveHold | undefined): HoldEndResult | undefined {
  if (hold === undefined) return { status: 'unknown_hold' };
  if (hold.status !== 'active') return { status: 'hold_not_active', holdStatus: hold.status };
  return undefined;
}

/** Turns an active, unexpired hold into an order: its seats are sold, for good. */
export function confirmHold(
  pool: Pool,
  events: EventWriter,
  request: { holdId: string; buyerEmail: string },
  logger?: Logger,
): Promise<HoldEndResult> {
  return withTransaction(
    pool,
    async (client) => {
      const hold = await lockHold(client, request.holdId);
      const refused = refusal(hold);
      if (refused || hold === undefined) return refused ?? { status: 'unknown_hold' };
      if (hold.expired) return { status: 'hold_expired' };
      return writeOrder(client, events, hold, request.buyerEmail);
    },
    { retries: CONTENTION_RETRIES, logger },
  );
}

async function writeOrder(
  client: PoolClient,
  events: EventWriter,
  hold: ActiveHold,
  buyerEmail: string,
): Promise<HoldEndResult> {
  const orderId = randomUUID();
  const now = new Date();
  const seatIds = hold.seats.map((s) => s.seat_id);
  const total = hold.seats.reduce((sum, s) => sum + s.price_cents, 0);
  await client.query(
    /* sql */ `insert into orders (order_id, hold_id, show_id, buyer_id, buyer_email, total_cents, created_at)
      values ($1, $2, $3, $4, $5, $6, $7)`,
    [orderId, hold.hold_id, hold.show_id, hold.buyer_id, buyerEmail, total, now],
  );
  await client.query(
    /* sql */ `insert into order_seats (seat_id, order_id, price_cents)
      select unnest($2::text[]), $1, unnest($3::int[])`,
    [orderId, seatIds, hold.seats.map((s) => s.price_cents)],
  );
  await closeHold(client, hold.hold_id, 'confirmed', 'sold', seatIds, now);
  const pending: PendingEvent[] = hold.seats.map((seat) => ({
    name: 'seatSold',
    payload: {
      seat_id: seat.seat_id,
      show_id: hold.show_id,
      section: seat.section,
      order_id: orderId,
      price_cents: seat.price_cents,
      sold_at: now.getTime(),
      ...placeOf(seat),
    },
  }));
  pending.push({
    name: 'orderConfirmed',
    payload: {
      order_id: orderId,
      show_id: hold.show_id,
      hold_id: hold.hold_id,
      buyer_id: hold.buyer_id,
      buyer_email: buyerEmail,
      seat_ids: seatIds,
      total_cents: total,
      currency: 'EUR',
      confirmed_at: now.getTime(),
    },
  });
  return { status: 'confirmed', orderId, eventIds: await events.write(client, pending, now) };
}

async function closeHold(
  client: PoolClient,
  holdId: string,
  status: string,
  seatState: string,
  seatIds: string[],
  at: Date,
): Promise<void> {
  await client.query(/* sql */ `update holds set status = $2, closed_at = $3 where hold_id = $1`, [holdId, status, at]);
  await client.query(/* sql */ `update hold_seats set active = false where hold_id = $1 and active`, [holdId]);
  await client.query(/* sql */ `update seats set state = $2, updated_at = $3 where seat_id = any($1::text[])`, [
    seatIds,
    seatState,
    at,
  ]);
}

/** The buyer gives a hold back: its seats are available again. */
export function releaseHold(pool: Pool, events: EventWriter, holdId: string, logger?: Logger): Promise<HoldEndResult> {
  return withTransaction(
    pool,
    async (client) => {
      const hold = await lockHold(client, holdId);
      const refused = refusal(hold);
      if (refused || hold === undefined) return refused ?? { status: 'unknown_hold' };
      const eventIds = await endHoldAsAvailable(client, events, hold, 'released');
      return { status: 'released', eventIds };
    },
    { retries: CONTENTION_RETRIES, logger },
  );
}

/** Closes a hold as released or expired and writes one event per seat. */
export async function endHoldAsAvailable(
  client: PoolClient,
  events: EventWriter,
  hold: Pick<ActiveHold, 'hold_id' | 'show_id' | 'seats'>,
  how: 'released' | 'expired',
): Promise<string[]> {
  const now = new Date();
  await closeHold(
    client,
    hold.hold_id,
    how,
    'available',
    hold.seats.map((s) => s.seat_id),
    now,
  );
  const pending: PendingEvent[] = hold.seats.map((seat) =>
    how === 'released'
      ? {
          name: 'seatReleased',
          payload: {
            seat_id: seat.seat_id,
            show_id: hold.show_id,
            section: seat.section,
            hold_id: hold.hold_id,
            released_at: now.getTime(),
            ...placeOf(seat),
          },
        }
      : {
          name: 'seatHoldExpired',
          payload: {
            seat_id: seat.seat_id,
            show_id: hold.show_id,
            section: seat.section,
            hold_id: hold.hold_id,
            expired_at: now.getTime(),
            ...placeOf(seat),
          },
        },
  );
  return events.write(client, pending, now);
}
