/**
 * Seat events applied to the availability read model, in offset order (per seat = per key).
 * A sold seat stays sold; a release or an expiry frees the seat only from the hold it names; an
 * event older than the seat's last one never overwrites it (a lost-slot re-emit can deliver a
 * seat's events out of order), but still counts as seen, so a stale hold cannot come back.
 */
import { EVENTS, type SeatHeld, type SeatHoldExpired, type SeatReleased, type SeatSold } from '../../events/catalogue.js';
import type { PoolClient } from '../../lib/postgres.js';
import type { ConsumedEvent } from '../runtime/types.js';

async function markHeld(client: PoolClient, event: ConsumedEvent, seat: SeatHeld): Promise<void> {
  await client.query(
    /* sql */ `
    INSERT INTO seat_availability_seats (seat_id, show_id, section, state, hold_id, last_event_id, last_event_at)
    VALUES ($1, $2, $3, 'held', $4, $5, $6)
    ON CONFLICT (seat_id) DO UPDATE SET state = 'held', hold_id = excluded.hold_id, last_event_id = excluded.last_event_id,
      last_event_at = excluded.last_event_at, updated_at = now()
      WHERE seat_availability_seats.state <> 'sold' AND seat_availability_seats.last_event_at <= excluded.last_event_at`,
    [seat.seat_id, seat.show_id, seat.section, seat.hold_id, event.id, event.time],
  );
}

async function markFreed(client: PoolClient, event: ConsumedEvent, seat: SeatReleased | SeatHoldExpired): Promise<void> {
  await client.query(
    /* sql */ `
    INSERT INTO seat_availability_seats (seat_id, show_id, section, state, last_event_id, last_event_at)
    VALUES ($1, $2, $3, 'available', $5, $6)
    ON CONFLICT (seat_id) DO UPDATE SET
      state = CASE WHEN seat_availability_seats.state = 'held' AND seat_availability_seats.hold_id = $4 THEN 'available' ELSE seat_availability_seats.state END,
      hold_id = CASE WHEN seat_availability_seats.state = 'held' AND seat_availability_seats.hold_id = $4 THEN NULL ELSE seat_availability_seats.hold_id END,
      last_event_id = excluded.last_event_id, last_event_at = excluded.last_event_at, updated_at = now()
      WHERE seat_availability_seats.last_event_at <= excluded.last_event_at`,
    [seat.seat_id, seat.show_id, seat.section, seat.hold_id, event.id, event.time],
  );
}

async function markSold(client: PoolClient, event: ConsumedEvent, seat: SeatSold): Promise<void> {
  await client.query(
    /* sql */ `
    INSERT INTO seat_availability_seats (seat_id, show_id, section, state, order_id, last_event_id, last_event_at)
    VALUES ($1, $2, $3, 'sold', $4, $5, $6)
    ON CONFLICT (seat_id) DO UPDATE SET state = 'sold', hold_id = NULL, order_id = excluded.order_id,
      last_event_id = excluded.last_event_id, last_event_at = excluded.last_event_at, updated_at = now()`,
    [seat.seat_id, seat.show_id, seat.section, seat.order_id, event.id, event.time],
  );
}

export async function applySeatEvents(client: PoolClient, events: readonly ConsumedEvent[]): Promise<void> {
  for (const event of events) {
    switch (event.type) {
      case EVENTS.seatHeld.type:
        await markHeld(client, event, event.payload as SeatHeld);
        break;
      case EVENTS.seatReleased.type:
      case EVENTS.seatHoldExpired.type:
        await markFreed(client, event, event.payload as SeatReleased | SeatHoldExpired);
        break;
      case EVENTS.seatSold.type:
        await markSold(client, event, event.payload as SeatSold);
        break;
      default:
        throw new Error(`seat availability has no rule for ${event.type}`);
    }
  }
}
