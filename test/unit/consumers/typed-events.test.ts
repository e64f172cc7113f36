/**
 * The types a consumer author gets: a definition's handler receives its event types' union,
 * discriminated by `type`, each payload typed from the Avro schemas. The checks here are tsc's
 * (npm run typecheck): `expectTypeOf` and `@ts-expect-error` fail the build if `P` is lost again
 * (a handler whose events are `ConsumedEvent<unknown>`) or a wrong handler is accepted.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type CatalogueEvent,
  type ConsumedEvent,
  type ConsumerDefinition,
  EVENTS,
  type EventPayloads,
  type EventTypeSpec,
  type OrderConfirmed,
  type SeatHeld,
  type SeatSold,
  catalogueEventTypes,
  defineConsumer,
} from '../../../consumers/runtime/index.js';
import type { decodeCloudEvent } from '../../../consumers/runtime/cloud-event.js';

const seatTypes = catalogueEventTypes(['seatHeld', 'seatSold'], 'keep-retrying');

describe('typed events', () => {
  it('a transactional handler receives the union of its event types, narrowed by type', () => {
    const definition = defineConsumer({
      name: 'typed',
      topics: ['t'],
      eventTypes: seatTypes,
      effects: {
        kind: 'transactional',
        apply: async (_client, events) => {
          expectTypeOf(events).toEqualTypeOf<readonly CatalogueEvent<'seatHeld' | 'seatSold'>[]>();
          for (const event of events) {
            expectTypeOf(event.payload.show_id).toEqualTypeOf<string>();
            if (event.type === EVENTS.seatSold.type) expectTypeOf(event.payload).toEqualTypeOf<SeatSold>();
            else expectTypeOf(event.payload).toEqualTypeOf<SeatHeld>();
            // @ts-expect-error -- order_id is a SeatSold field: not known before narrowing.
            void event.payload.order_id;
          }
        },
      },
    });
    expectTypeOf(definition).toEqualTypeOf<ConsumerDefinition<CatalogueEvent<'seatHeld' | 'seatSold'>>>();
    // A typed definition is any ConsumerDefinition, as startConsumer and runConsumerProgram take it.
    expectTypeOf(definition).toExtend<ConsumerDefinition>();
    expect(Object.keys(definition.eventTypes)).toEqual([EVENTS.seatHeld.type, EVENTS.seatSold.type]);
  });

  it('an external handler receives one event of its types', () => {
    defineConsumer({
      name: 'typed',
      topics: ['t'],
      eventTypes: catalogueEventTypes(['orderConfirmed'], 'dead-letter'),
      effects: {
        kind: 'external',
        claimAbandonedAfterMs: 60_000,
        perform: async (event) => {
          expectTypeOf(event).toEqualTypeOf<ConsumedEvent<OrderConfirmed, 'com.stagefront.order.confirmed'>>();
        },
      },
    });
  });

  it('a handler written for fewer event types than the definition lists is refused', () => {
    const applyHolds = async (_client: unknown, events: readonly CatalogueEvent<'seatHeld'>[]) => void events;
    const applyAnything = async (_client: unknown, events: readonly ConsumedEvent[]) => void events;
    defineConsumer({
      name: 'typed',
      topics: ['t'],
      eventTypes: seatTypes,
      // @ts-expect-error -- seat.sold events would reach a handler of seat.held only.
      effects: { kind: 'transactional', apply: applyHolds },
    });
    // A handler that takes more than the definition lists is fine.
    defineConsumer({
      name: 'typed',
      topics: ['t'],
      eventTypes: seatTypes,
      effects: { kind: 'transactional', apply: applyAnything },
    });
  });

  it("an event type of the consumer's own types its payload by its parse", () => {
    const own = {
      'com.example.ping': { whenLate: 'keep-retrying', parse: (payload: unknown) => ({ n: Number(payload) }) },
    } satisfies Record<string, EventTypeSpec<{ n: number }>>;
    defineConsumer({
      name: 'own',
      topics: ['t'],
      eventTypes: own,
      effects: {
        kind: 'transactional',
        apply: async (_client, events) => {
          expectTypeOf(events).toEqualTypeOf<readonly ConsumedEvent<{ n: number }, 'com.example.ping'>[]>();
        },
      },
    });
  });

  it('catalogue events, their payload types and the decode agree', () => {
    expectTypeOf<CatalogueEvent<'seatHeld'>['payload']>().toEqualTypeOf<EventPayloads['seatHeld']>();
    expectTypeOf<CatalogueEvent<'seatHeld'>['type']>().toEqualTypeOf<'com.stagefront.seat.held'>();
    expectTypeOf<Awaited<ReturnType<typeof decodeCloudEvent<typeof seatTypes>>>>().toEqualTypeOf<
      CatalogueEvent<'seatHeld' | 'seatSold'> | undefined
    >();
    const seatSold = seatTypes[EVENTS.seatSold.type];
    expectTypeOf(seatSold.parse).returns.toEqualTypeOf<SeatSold>();
    const sold = { seat_id: 'A1', show_id: 's', section: 'A', order_id: 'o', price_cents: 100, sold_at: 1 };
    expect(seatSold.parse({ ...sold, row: '3', seat_number: 9 })).toEqual({ ...sold, row: '3', seat_number: 9 });
    // Written before version 2 and read with a reader schema that lacks them: no place, not an invalid payload.
    expect(seatSold.parse(sold)).toEqual({ ...sold, row: null, seat_number: null });
    expect(() => seatSold.parse({ ...sold, row: 'C', seat_number: 0 })).toThrow(/seat_number/);
  });
});
