import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from '../lib/postgres.js';
import { withTransaction } from '../lib/postgres.js';
import type { Logger } from '../lib/logger.js';
import type { EventWriter, PendingEvent } from './event-writer.js';

export type HoldResult =
  | { status: 'held'; holdId: string; expiresAt: Date; eventIds: string[] }
  | { status: 'seat_taken'; seatIds: string[] }
  | { status: 'unknown_seats'; seatIds: string[] };

export interface HoldRequest {
  showId: string;
  seatIds: string[];
  buyerId: string;
  ttlMs: number;
}

interface LockedSeat {
  seat_id: string;
  section: string;
  row_label: string;
  seat_number: number;
  state: string;
}

/** Where a seat is, as the seat events carry it (version 2 of their schemas), from its row in seats. */
export function placeOf(seat: { row_label: string; seat_number: number }): { row: string; seat_number: number } {
  return { row: seat.row_label, seat_number: seat.seat_number };
}

/** Retries of a whole transaction on deadlock or serialization failure: contention is normal at 10:00. */
export const CONTENTION_RETRIES = 8;

/**
 * Holds every requested seat or none. Seats are locked in seat id order, so buyers racing for
 * overlapping seats queue instead of deadlocking; a buyer who loses gets `seat_taken`.
 */
export function holdSeats(pool: Pool, events: EventWriter, request: HoldRequest, logger?: Logger): Promise<HoldResult> {
  const seatIds = [...new Set(request.seatIds)].sort();
  if (seatIds.length === 0) throw new Error('a hold needs at least one seat');
  return withTransaction(
    pool,
    async (client) => {
      const locked = await lockSeats(client, request.showId, seatIds);
      const known = new Set(locked.map((s) => s.seat_id));
      const unknown = seatIds.filter((id) => !known.has(id));
      if (unknown.length > 0) return { status: 'unknown_seats', seatIds: unknown };
      const taken = locked.filter((s) => s.state !== 'available').map((s) => s.seat_id);
      if (taken.length > 0) return { status: 'seat_taken', seatIds: taken };
      return writeHold(client, events, request, locked);
    },
    { retries: CONTENTION_RETRIES, logger },
  );
}

async function lockSeats(client: PoolClient, showId: string, seatIds: string[]): Promise<LockedSeat[]> {
  const { rows } = await client.query<LockedSeat>(
    /* sql */ `select seat_id, section, row_label, seat_number, state from seats
      where show_id = $1 and seat_id = any($2::text[]) order by seat_id for update`,
    [showId, seatIds],
  );
  return rows;
}

async function writeHold(
  client: PoolClient,
  events: EventWriter,
  request: HoldRequest,
  seats: LockedSeat[],
): Promise<HoldResult> {
  const holdId = randomUUID();
  const now = new Date();
  const expiresAt = new Date(now.getTime() + request.ttlMs);
  const seatIds = seats.map((s) => s.seat_id);
  await client.query(
    /* sql */ `insert into holds (hold_id, show_id, buyer_id, created_at, expires_at) values ($1, $2, $3, $4, $5)`,
    [holdId, request.showId, request.buyerId, now, expiresAt],
  );
  await client.query(/* sql */ `insert into hold_seats (hold_id, seat_id) select $1, unnest($2::text[])`, [
    holdId,
    seatIds,
  ]);
  await client.query(/* sql */ `update seats set state = 'held', updated_at = $2 where seat_id = any($1::text[])`, [
    seatIds,
    now,
  ]);
  const pending: PendingEvent[] = seats.map((seat) => ({
    name: 'seatHeld',
    payload: {
      seat_id: seat.seat_id,
      show_id: request.showId,
      section: seat.section,
      hold_id: holdId,
      buyer_id: request.buyerId,
      held_at: now.getTime(),
      expires_at: expiresAt.getTime(),
      ...placeOf(seat),
    },
  }));
  const eventIds = await events.write(client, pending, now);
  return { status: 'held', holdId, expiresAt, eventIds };
}
