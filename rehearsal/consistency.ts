import type { Pool } from '../lib/postgres.js';
import { compareTotals, totalsFromLedger, totalsFromSeatDatabase } from '../consumers/sales-ledger/recompute.js';
import { EVENTS } from '../events/catalogue.js';
import { CONSUMER_KINDS, eventTypesOf, type ReconciledConsumer } from '../monitors/reconciliation/consumer-kinds.js';
import { reconcile, type Reconciliation } from '../monitors/reconciliation/reconcile.js';

/** The rehearsal's consumers as reconciliation sees them: each kind under its own name in the inbox. */
export const REHEARSAL_CONSUMERS: ReconciledConsumer[] = CONSUMER_KINDS.map((kind) => ({ kind, name: kind, eventTypes: eventTypesOf(kind) }));

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/**
 * Published vs handled per consumer for the outbox rows created in [from, to), by the
 * reconciliation module (`npm run reconcile` runs the same code): the source of every
 * exactly-once verdict of the report.
 */
export function reconcileRun(seat: Pool, consumers: Pool, from: Date, to: Date): Promise<Reconciliation> {
  return reconcile({ seatPool: seat, consumerPool: consumers, consumers: REHEARSAL_CONSUMERS, from, to, pageSize: 5000, missingShown: 5 });
}

/**
 * One check per consumer: every event of its types published in the window is in its inbox. The
 * inbox keeps one row per (consumer, event), so "handled" cannot count an event twice; a doubled
 * effect would show in the read model, ledger and email checks.
 */
export function exactlyOnceChecks(result: Reconciliation): Check[] {
  return result.consumers.map((c) => ({
    name: `${c.consumer.name} handled every event once`,
    ok: c.missing === 0,
    detail: `${c.handled} of ${c.published} (reconciliation)${c.missing > 0 ? `, missing ${c.missing}: ${c.missingIds.join(', ')}` : ''}`,
  }));
}

/** No seat in the whole seat database is in two orders (every show, this one included), and the seat table agrees. */
export async function oversoldCheck(seat: Pool, showId: string): Promise<Check> {
  const { rows } = await seat.query<{ doubled: number; sold: number; sold_rows: number; show_sold: number }>(/* sql */ `
    select (select count(*) from (select seat_id from order_seats group by seat_id having count(*) > 1) d)::int as doubled,
           (select count(*) from order_seats)::int as sold_rows,
           (select count(*) from seats where state = 'sold')::int as sold,
           (select count(*) from seats where state = 'sold' and show_id = $1)::int as show_sold`, [showId]);
  const r = rows[0] ?? { doubled: -1, sold: -1, sold_rows: -2, show_sold: -1 };
  return { name: 'no seat sold twice', ok: r.doubled === 0 && r.sold === r.sold_rows, detail: `${r.show_sold} seats sold for this show; in the whole database ${r.sold} sold, ${r.doubled} sold twice` };
}

/** The availability read model (built from events only) against the seat table. */
export async function availabilityCheck(seat: Pool, consumers: Pool, showId: string): Promise<Check> {
  const truth = await seat.query<{ section: string; held: number; sold: number }>(/* sql */ `
    select section, count(*) filter (where state = 'held')::int as held, count(*) filter (where state = 'sold')::int as sold
      from seats where show_id = $1 group by section order by section`, [showId]);
  const model = await consumers.query<{ section: string; held: number; sold: number }>(/* sql */ `
    select section, held, sold from seat_availability_sections where show_id = $1 order by section`, [showId]);
  const bySection = new Map(model.rows.map((r) => [r.section, r]));
  const wrong = truth.rows.filter((t) => (bySection.get(t.section)?.held ?? 0) !== t.held || (bySection.get(t.section)?.sold ?? 0) !== t.sold);
  const detail = truth.rows.map((t) => `${t.section}: ${t.sold} sold/${t.held} held (read model ${bySection.get(t.section)?.sold ?? 0}/${bySection.get(t.section)?.held ?? 0})`).join(', ');
  return { name: 'availability read model matches the seats', ok: wrong.length === 0, detail };
}

/** The whole ledger against a recompute (every show); the detail shows this run's show. */
export async function ledgerCheck(seat: Pool, consumers: Pool, showId: string): Promise<Check> {
  const ledger = await totalsFromLedger(consumers);
  const differences = compareTotals(ledger, await totalsFromSeatDatabase(seat));
  const mine = ledger.filter((row) => row.show_id === showId);
  const others = new Set(ledger.filter((row) => row.show_id !== showId).map((row) => row.show_id)).size;
  const detail = `${mine.map((row) => `${row.show_id}: ${row.orders} orders, ${row.seats} seats, ${(row.total_cents / 100).toFixed(2)} ${row.currency}`).join('; ') || `${showId}: no orders`}${others > 0 ? ` (and ${others} earlier shows)` : ''}`;
  return { name: 'sales ledger equals a recompute from the seat database', ok: differences.length === 0, detail: differences.length === 0 ? detail : JSON.stringify(differences) };
}

export async function emailCheck(seat: Pool, messageIds: readonly string[], since: Date): Promise<Check> {
  const { rows } = await seat.query<{ id: string }>(`select id::text from outbox where type = $1 and created_at >= $2`, [EVENTS.orderConfirmed.type, since]);
  const orders = new Set(rows.map((r) => r.id));
  // The Message-ID is <ce_id@host>; a mailbox shared with earlier runs (Mailpit) holds other orders' emails too.
  const ours = messageIds.map((id) => id.split('@')[0] ?? id).filter((id) => orders.has(id));
  const received = new Set(ours);
  const missing = rows.filter((r) => !received.has(r.id)).length;
  const duplicates = ours.length - received.size;
  return { name: 'one confirmation email per order', ok: missing === 0 && duplicates === 0, detail: `${ours.length} emails for ${rows.length} orders, ${missing} missing, ${duplicates} duplicates` };
}
