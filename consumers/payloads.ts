/**
 * Validators for the catalogue's payloads as the consumers read them. Avro already checked the
 * types; these check what Avro cannot (non-empty ids, non-negative amounts, an email address).
 */
import { z } from 'zod';
import { EVENTS, type EventName, readEventSchema } from '../events/catalogue.js';
import type { EventTypeSpec, LatePolicy } from './runtime/types.js';

const id = z.string().min(1);
const millis = z.number().int().nonnegative();

export const payloadSchemas = {
  seatHeld: z.object({
    seat_id: id,
    show_id: id,
    section: id,
    hold_id: id,
    buyer_id: id,
    held_at: millis,
    expires_at: millis,
  }),
  seatReleased: z.object({ seat_id: id, show_id: id, section: id, hold_id: id, released_at: millis }),
  seatHoldExpired: z.object({ seat_id: id, show_id: id, section: id, hold_id: id, expired_at: millis }),
  seatSold: z.object({
    seat_id: id,
    show_id: id,
    section: id,
    order_id: id,
    price_cents: z.number().int().nonnegative(),
    sold_at: millis,
  }),
  orderConfirmed: z.object({
    order_id: id,
    show_id: id,
    hold_id: id,
    buyer_id: id,
    buyer_email: z.email(),
    seat_ids: z.array(id).min(1),
    total_cents: z.number().int().nonnegative(),
    currency: z.string().length(3),
    confirmed_at: millis,
  }),
} as const satisfies Record<EventName, z.ZodType>;

/**
 * The runtime's event type entries for catalogue events, read with this build's schema files.
 * `whenLate` is the consumer's: the same order.confirmed is right however late in a ledger and
 * wrong hours late as an email.
 */
export function catalogueEventTypes(names: readonly EventName[], whenLate: LatePolicy): Record<string, EventTypeSpec> {
  return Object.fromEntries(
    names.map((name) => [
      EVENTS[name].type,
      {
        whenLate,
        readerSchema: readEventSchema(name),
        parse: (payload: unknown) => payloadSchemas[name].parse(payload),
      },
    ]),
  );
}
