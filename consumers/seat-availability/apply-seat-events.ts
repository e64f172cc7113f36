/**
 * Seat events applied to the availability read model, set-based: one statement reads (and locks)
 * the batch's seats, the events are folded per seat in offset order (per seat = per key), and one
 * statement writes every seat that changed. The rules, per event:
 * - a sold seat stays sold (a sale always wins, whatever its time);
 * - a release or an expiry frees the seat only from the hold it names;
 * - an event older than the seat's last one never overwrites it (a lost-slot re-emit can deliver a
 *   seat's events out of order), but a newer release or expiry still counts as seen, so a stale
 *   hold cannot come back.
 */
import { EVENTS } from '../../events/catalogue.js';
import type { PoolClient } from '../../lib/postgres.js';
import type { CatalogueEvent } from '../payloads.js';

/** The events seat availability reads: every seat event. */
export type SeatEvent = CatalogueEvent<'seatHeld' | 'seatReleased' | 'seatHoldExpired' | 'seatSold'>;

interface SeatRow {
  seat_id: string;
  show_id: string;
  section: string;
  state: 'available' | 'held' | 'sold';
  hold_id: string | null;
  order_id: string | null;
  last_event_id: string;
  /** As written (RFC 3339 from ce_time, or Postgres' text of a stored time). */
  last_event_at: string;
  /** Microseconds since the epoch, for comparing: ce_time may carry more than milliseconds. */
  last_event_us: number;
}

/** Microseconds since the epoch of an RFC 3339 time (Date.parse keeps milliseconds only). */
export function microsOf(time: string): number {
  const fraction = /T\d{2}:\d{2}:\d{2}\.(\d+)/.exec(time)?.[1] ?? '';
  return Date.parse(time) * 1000 + Number(`${fraction}000000`.slice(3, 6));
}

function seen(row: SeatRow | undefined, event: SeatEvent): SeatRow {
  const seat = event.payload;
  return {
    seat_id: seat.seat_id,
    show_id: row?.show_id ?? seat.show_id,
    section: row?.section ?? seat.section,
    state: row?.state ?? 'available',
    hold_id: row?.hold_id ?? null,
    order_id: row?.order_id ?? null,
    last_event_id: event.id,
    last_event_at: event.time,
    last_event_us: microsOf(event.time),
  };
}

/** The seat after one event; `row` is undefined for a seat never seen. */
export function nextSeatState(row: SeatRow | undefined, event: SeatEvent): SeatRow {
  const older = row !== undefined && row.last_event_us > microsOf(event.time);
  switch (event.type) {
    case EVENTS.seatHeld.type: {
      if (row !== undefined && (row.state === 'sold' || older)) return row;
      return { ...seen(row, event), state: 'held', hold_id: event.payload.hold_id };
    }
    case EVENTS.seatReleased.type:
    case EVENTS.seatHoldExpired.type: {
      if (row !== undefined && older) return row;
      const frees = row?.state === 'held' && row.hold_id === event.payload.hold_id;
      return frees ? { ...seen(row, event), state: 'available', hold_id: null } : seen(row, event);
    }
    case EVENTS.seatSold.type:
      return { ...seen(row, event), state: 'sold', hold_id: null, order_id: event.payload.order_id };
    default:
      // Unreachable while every SeatEvent has a case: tsc refuses a new one without its rule.
      return noRuleFor(event);
  }
}

function noRuleFor(event: never): never {
  throw new Error(`seat availability has no rule for ${JSON.stringify(event)}`);
}

async function lockSeats(client: PoolClient, seatIds: readonly string[]): Promise<Map<string, SeatRow>> {
  const result = await client.query<SeatRow>(
    /* sql */ `
    SELECT seat_id, show_id, section, state, hold_id, order_id, last_event_id, last_event_at::text AS last_event_at,
           (extract(epoch FROM last_event_at) * 1000000)::float8 AS last_event_us
      FROM seat_availability_seats
     WHERE seat_id = ANY($1::text[])
     ORDER BY seat_id
       FOR UPDATE`,
    [seatIds],
  );
  return new Map(result.rows.map((row) => [row.seat_id, row]));
}

async function writeSeats(client: PoolClient, rows: readonly SeatRow[]): Promise<void> {
  await client.query(
    /* sql */ `
    INSERT INTO seat_availability_seats (seat_id, show_id, section, state, hold_id, order_id, last_event_id, last_event_at)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
    ON CONFLICT (seat_id) DO UPDATE SET state = excluded.state, hold_id = excluded.hold_id, order_id = excluded.order_id,
      last_event_id = excluded.last_event_id, last_event_at = excluded.last_event_at, updated_at = now()`,
    [
      rows.map((r) => r.seat_id),
      rows.map((r) => r.show_id),
      rows.map((r) => r.section),
      rows.map((r) => r.state),
      rows.map((r) => r.hold_id),
      rows.map((r) => r.order_id),
      rows.map((r) => r.last_event_id),
      rows.map((r) => r.last_event_at),
    ],
  );
}

export async function applySeatEvents(client: PoolClient, events: readonly SeatEvent[]): Promise<void> {
  const seatIds = [...new Set(events.map((event) => event.payload.seat_id))];
  const before = await lockSeats(client, seatIds);
  const after = new Map(before);
  for (const event of events) {
    const seatId = event.payload.seat_id;
    after.set(seatId, nextSeatState(after.get(seatId), event));
  }
  const changed = [...after.values()].filter((row) => row !== before.get(row.seat_id));
  if (changed.length > 0) await writeSeats(client, changed);
}
