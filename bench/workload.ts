/**
 * The bench's events, written as the seat service writes them: outbox rows through its event
 * writer (Avro through the registry), one transaction per call. Event `index` belongs to seat
 * `index % seats`, at step `index / seats + seat` of that seat's cycle (held, released, held,
 * sold; staggered by seat so that a sale is one event in four at any time), with orders the
 * order.confirmed of a sale in the same transaction. With `ordersOnly`, each event is an
 * order.confirmed of its own (the email bench, whose rate is emails per second).
 */
import type { EventPayloads } from '../events/catalogue.js';
import { withTransaction } from '../lib/postgres.js';
import type { PendingEvent } from '../seat-service/event-writer.js';
import type { SeatService } from '../seat-service/service.js';

const SHOWS = 4;

function orderConfirmed(
  order: string,
  seat: number,
  base: { seat_id: string; show_id: string; hold_id: string },
  at: number,
): PendingEvent {
  const payload: EventPayloads['orderConfirmed'] = {
    order_id: order,
    show_id: base.show_id,
    hold_id: base.hold_id,
    buyer_id: `buyer-${seat}`,
    buyer_email: `buyer-${seat}@example.test`,
    seat_ids: [base.seat_id],
    total_cents: 4500,
    currency: 'EUR',
    confirmed_at: at,
  };
  return { name: 'orderConfirmed', payload };
}

function seatEvents(index: number, seats: number, at: number, withOrders: boolean): PendingEvent[] {
  const seat = index % seats;
  const step = Math.floor(index / seats) + seat; // staggered: every stretch of events has sales in it
  const base = {
    seat_id: `seat-${seat}`,
    show_id: `show-${seat % SHOWS}`,
    section: `S${seat % 10}`,
    hold_id: `hold-${seat}-${step >> 1}`,
    row: String(1 + (seat % 20)),
    seat_number: 1 + Math.floor(seat / 20),
  };
  switch (step % 4) {
    case 0:
    case 2:
      return [
        {
          name: 'seatHeld',
          payload: {
            ...base,
            buyer_id: `buyer-${seat}`,
            held_at: at,
            expires_at: at + 600_000,
          } satisfies EventPayloads['seatHeld'],
        },
      ];
    case 1:
      return [{ name: 'seatReleased', payload: { ...base, released_at: at } satisfies EventPayloads['seatReleased'] }];
    default: {
      const order = `order-${seat}-${step}`;
      const sold: PendingEvent = {
        name: 'seatSold',
        payload: {
          seat_id: base.seat_id,
          show_id: base.show_id,
          section: base.section,
          order_id: order,
          price_cents: 4500,
          sold_at: at,
          row: base.row,
          seat_number: base.seat_number,
        } satisfies EventPayloads['seatSold'],
      };
      if (!withOrders) return [sold];
      return [sold, orderConfirmed(order, seat, base, at)];
    }
  }
}

/**
 * Writes events `from` … `from + count - 1` in one transaction; returns each outbox row's id
 * (ce_id) with the index of the event it came from (an order.confirmed shares its sale's index).
 */
export async function writeWorkload(
  service: SeatService,
  options: { from: number; count: number; seats: number; withOrders?: boolean; ordersOnly?: boolean; at?: Date },
): Promise<{ id: string; index: number }[]> {
  const at = options.at ?? new Date();
  const eventsOf = (index: number): PendingEvent[] => {
    if (!options.ordersOnly) return seatEvents(index, options.seats, at.getTime(), options.withOrders ?? false);
    const seat = index % options.seats;
    const base = { seat_id: `seat-${seat}`, show_id: `show-${seat % SHOWS}`, hold_id: `hold-${index}` };
    return [orderConfirmed(`order-${index}`, seat, base, at.getTime())];
  };
  const indexed = Array.from({ length: options.count }, (_, i) =>
    eventsOf(options.from + i).map((event) => ({
      event,
      index: options.from + i,
    })),
  ).flat();
  const ids = await withTransaction(
    service.pool,
    (client) =>
      service.events.write(
        client,
        indexed.map((e) => e.event),
        at,
      ),
    { retries: 0 },
  );
  return ids.map((id, i) => ({ id, index: indexed[i]?.index ?? -1 }));
}
