/** order.confirmed events added to the per show totals: one upsert per show and currency per batch. */
import type { PoolClient } from '../../lib/postgres.js';
import type { CatalogueEvent } from '../payloads.js';

interface ShowTotals {
  showId: string;
  currency: string;
  orders: number;
  seats: number;
  totalCents: number;
}

function totalsByShow(events: readonly CatalogueEvent<'orderConfirmed'>[]): ShowTotals[] {
  const totals = new Map<string, ShowTotals>();
  for (const event of events) {
    const order = event.payload;
    const key = `${order.show_id}\u0000${order.currency}`;
    const entry = totals.get(key) ?? {
      showId: order.show_id,
      currency: order.currency,
      orders: 0,
      seats: 0,
      totalCents: 0,
    };
    entry.orders += 1;
    entry.seats += order.seat_ids.length;
    entry.totalCents += order.total_cents;
    totals.set(key, entry);
  }
  return [...totals.values()];
}

export async function applyConfirmedOrders(
  client: PoolClient,
  events: readonly CatalogueEvent<'orderConfirmed'>[],
): Promise<void> {
  const totals = totalsByShow(events);
  await client.query(
    /* sql */ `
    INSERT INTO sales_ledger_totals (show_id, currency, orders, seats, total_cents)
    SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::bigint[])
    ON CONFLICT (show_id, currency) DO UPDATE SET
      orders = sales_ledger_totals.orders + excluded.orders,
      seats = sales_ledger_totals.seats + excluded.seats,
      total_cents = sales_ledger_totals.total_cents + excluded.total_cents,
      updated_at = now()`,
    [
      totals.map((t) => t.showId),
      totals.map((t) => t.currency),
      totals.map((t) => t.orders),
      totals.map((t) => t.seats),
      totals.map((t) => t.totalCents),
    ],
  );
}
