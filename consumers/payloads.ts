/**
 * Validators for the catalogue's payloads as the consumers read them. Avro already checked the
 * types; these check what Avro cannot (non-empty ids, non-negative amounts, an email address).
 * The payload types come from the Avro schemas (events/payload-types.ts, generated); each
 * validator must give exactly its event's payload type, or `npm run typecheck` fails (a field
 * added to a schema without a rule here, or one left here after the schema dropped it).
 */
import { z } from 'zod';
import { EVENTS, type EventName, type EventPayloads, type EventType, readEventSchema } from '../events/catalogue.js';
import type { EventOf, EventTypeSpec, LatePolicy } from './runtime/types.js';

const id = z.string().min(1);
const millis = z.number().int().nonnegative();
/** Where a seat is (version 2 of the seat events): null in events written before it, or when a reader's schema lacks it. */
const seatPlace = {
  row: z.string().nullable().default(null),
  seat_number: z.number().int().positive().nullable().default(null),
};

export const payloadSchemas = {
  seatHeld: z.object({
    seat_id: id,
    show_id: id,
    section: id,
    hold_id: id,
    buyer_id: id,
    held_at: millis,
    expires_at: millis,
    ...seatPlace,
  }),
  seatReleased: z.object({ seat_id: id, show_id: id, section: id, hold_id: id, released_at: millis, ...seatPlace }),
  seatHoldExpired: z.object({ seat_id: id, show_id: id, section: id, hold_id: id, expired_at: millis, ...seatPlace }),
  seatSold: z.object({
    seat_id: id,
    show_id: id,
    section: id,
    order_id: id,
    price_cents: z.number().int().nonnegative(),
    sold_at: millis,
    ...seatPlace,
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
} satisfies { [N in EventName]: z.ZodType<EventPayloads[N]> };

/** True when A and B are the same type (not merely assignable: a nullable field counts). */
type Same<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;

/** Compiles only while every validator's output is exactly its payload type. */
const validatorsGivePayloadTypes: { [N in EventName]: Same<z.output<(typeof payloadSchemas)[N]>, EventPayloads[N]> } = {
  seatHeld: true,
  seatReleased: true,
  seatHoldExpired: true,
  seatSold: true,
  orderConfirmed: true,
};
void validatorsGivePayloadTypes;

/** The validators by name, typed so that `validators[name]` of a name `N` gives `EventPayloads[N]`. */
const validators: { readonly [N in EventName]: z.ZodType<EventPayloads[N]> } = payloadSchemas;

/** The event type entries of the catalogue events `N`, by ce_type, each typed by its payload. */
export type CatalogueEventTypes<N extends EventName> = {
  readonly [K in N as EventType<K>]: EventTypeSpec<EventPayloads[K]>;
};

/** A catalogue event as a consumer of `N` receives it: `switch (event.type)` narrows its payload. */
export type CatalogueEvent<N extends EventName = EventName> = EventOf<CatalogueEventTypes<N>>;

/**
 * The runtime's event type entries for catalogue events, read with this build's schema files.
 * `whenLate` is the consumer's: the same order.confirmed is right however late in a ledger and
 * wrong hours late as an email.
 */
export function catalogueEventTypes<N extends EventName>(
  names: readonly N[],
  whenLate: LatePolicy,
): CatalogueEventTypes<N> {
  const entries = names.map((name) => {
    const spec: EventTypeSpec<EventPayloads[N]> = {
      whenLate,
      readerSchema: readEventSchema(name),
      parse: (payload: unknown) => validators[name].parse(payload),
    };
    return [EVENTS[name].type, spec];
  });
  // Object.fromEntries forgets which key holds which entry; the map above pairs them.
  return Object.fromEntries(entries) as CatalogueEventTypes<N>;
}
