import type { Pool } from '../lib/postgres.js';
import { compareTotals, totalsFromLedger, totalsFromSeatDatabase } from '../consumers/sales-ledger/recompute.js';
import { EVENTS } from '../events/catalogue.js';
import { CONSUMER_KINDS, eventTypesOf, type ReconciledConsumer } from '../monitors/reconciliation/consumer-kinds.js';
import { reconcile, type Reconciliation } from '../monitors/reconciliation/reconcile.js';

/** The rehearsal's consumers as reconciliation sees them: each kind under its own name in the inbox. */
const REHEARSAL_CONSUMERS: ReconciledConsumer[] = CONSUMER_KINDS.map((kind) => ({
  kind,
  name: kind,
  eventTypes: eventTypesOf(kind),
}));

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/**
 * A claim of the email consumer older than this at the end of a run, never stamped sent, fails
 * its check: the run has drained by then, and a send that is still trying claims again on each
 * retry, so an old claim is a send that stopped (died mid-send, dead-lettered) or waits for
 * CLAIM_ABANDONED_AFTER_MS.
 */
const REHEARSAL_CLAIM_GRACE_MS = 30_000;

/**
 * Published vs handled per consumer for the outbox rows created in [from, to), by the
 * reconciliation module (`npm run reconcile` runs the same code): the source of every
 * exactly-once verdict of the report.
 */
export function reconcileRun(
  seat: Pool,
  consumers: Pool,
  from: Date,
  to: Date,
  claimGraceMs = REHEARSAL_CLAIM_GRACE_MS,
): Promise<Reconciliation> {
  return reconcile({
    seatPool: seat,
    consumerPool: consumers,
    consumers: REHEARSAL_CONSUMERS,
    from,
    to,
    pageSize: 5000,
    missingShown: 5,
    claimGraceMs,
  });
}

/**
 * One check per consumer: every event of its types published in the window is in its inbox and
 * done (for the email consumer: stamped sent, not only claimed; a claim past the grace fails, a
 * younger one is reported as in flight). The inbox keeps one row per (consumer, event), so this
 * proves nothing is missing, never that nothing was doubled: doubled effects are the other checks'
 * (the ledger's sums and the emails' Message-IDs count every application; the seat.sold events
 * per seat count every sale; the availability read model holds states, which a repeat leaves as
 * they were unless it brings an old one back, and that shows against the seat table).
 */
export function exactlyOnceChecks(result: Reconciliation): Check[] {
  return result.consumers.map((c) => {
    const parts = [`${c.handled} of ${c.published} (reconciliation)`];
    if (c.missing > 0) parts.push(`missing ${c.missing}: ${c.missingIds.join(', ')}`);
    if (c.unsent > 0) parts.push(`claimed and never sent ${c.unsent}: ${c.unsentIds.join(', ')}`);
    if (c.claimed > c.unsent) parts.push(`${c.claimed - c.unsent} claimed within the claim grace, not sent yet`);
    return {
      name: `${c.consumer.name} handled every event once`,
      ok: c.missing === 0 && c.unsent === 0,
      detail: parts.join(', '),
    };
  });
}

/**
 * No seat sold twice, from the effects rather than from a key: a seat with two seat.sold events in
 * the outbox (its aggregateid is the seat id; a seat is never sold again after its sale, so a
 * second event is a second sale) anywhere in the seat database, and the seat table agrees: as many
 * sold seats as order seats, and for this show every sold seat has its seat.sold event and every
 * seat.sold event is of a sold seat. (`order_seats.seat_id` is its primary key, so counting seats
 * in two orders there could never find one.)
 */
export async function oversoldCheck(seat: Pool, showId: string): Promise<Check> {
  const { rows } = await seat.query<{
    doubled: number;
    doubled_ids: string[] | null;
    sold: number;
    sold_rows: number;
    show_sold: number;
    sold_no_event: number;
    event_not_sold: number;
  }>(
    /* sql */ `
    with sales as (select aggregateid as seat_id, count(*)::int as events from outbox where type = $2 group by aggregateid),
         show_seats as (select seat_id, state from seats where show_id = $1)
    select (select count(*) from sales where events > 1)::int as doubled,
           (select array_agg(seat_id order by seat_id) from (select seat_id from sales where events > 1 order by seat_id limit 5) d) as doubled_ids,
           (select count(*) from order_seats)::int as sold_rows,
           (select count(*) from seats where state = 'sold')::int as sold,
           (select count(*) from show_seats where state = 'sold')::int as show_sold,
           (select count(*) from show_seats s where s.state = 'sold' and not exists (select 1 from sales e where e.seat_id = s.seat_id))::int as sold_no_event,
           (select count(*) from show_seats s join sales e using (seat_id) where s.state <> 'sold')::int as event_not_sold`,
    [showId, EVENTS.seatSold.type],
  );
  const r = rows[0];
  if (r === undefined) return { name: 'no seat sold twice', ok: false, detail: 'the seat database returned no row' };
  const ok = r.doubled === 0 && r.sold === r.sold_rows && r.sold_no_event === 0 && r.event_not_sold === 0;
  const problems = [
    ...(r.doubled > 0
      ? [`${r.doubled} seats with more than one seat.sold event (${(r.doubled_ids ?? []).join(', ')})`]
      : []),
    ...(r.sold !== r.sold_rows ? [`${r.sold} seats sold but ${r.sold_rows} order seats`] : []),
    ...(r.sold_no_event > 0 ? [`${r.sold_no_event} sold seats of this show without a seat.sold event`] : []),
    ...(r.event_not_sold > 0
      ? [`${r.event_not_sold} seats of this show with a seat.sold event that are not sold`]
      : []),
  ];
  return {
    name: 'no seat sold twice',
    ok,
    detail: `${r.show_sold} seats sold for this show; in the whole database ${r.sold} sold, ${r.doubled} sold twice (seat.sold events per seat)${problems.length > 0 ? `: ${problems.join('; ')}` : ''}`,
  };
}

/**
 * The availability read model (built from events only) against the seat table, per section: a
 * lost, repeated or reordered event that changed a seat's state shows as a count that differs.
 */
export async function availabilityCheck(seat: Pool, consumers: Pool, showId: string): Promise<Check> {
  const truth = await seat.query<{ section: string; held: number; sold: number }>(
    /* sql */ `
    select section, count(*) filter (where state = 'held')::int as held, count(*) filter (where state = 'sold')::int as sold
      from seats where show_id = $1 group by section order by section`,
    [showId],
  );
  const model = await consumers.query<{ section: string; held: number; sold: number }>(
    /* sql */ `
    select section, held, sold from seat_availability_sections where show_id = $1 order by section`,
    [showId],
  );
  const bySection = new Map(model.rows.map((r) => [r.section, r]));
  const wrong = truth.rows.filter(
    (t) => (bySection.get(t.section)?.held ?? 0) !== t.held || (bySection.get(t.section)?.sold ?? 0) !== t.sold,
  );
  const detail = truth.rows
    .map(
      (t) =>
        `${t.section}: ${t.sold} sold/${t.held} held (read model ${bySection.get(t.section)?.sold ?? 0}/${bySection.get(t.section)?.held ?? 0})`,
    )
    .join(', ');
  return { name: 'availability read model matches the seats', ok: wrong.length === 0, detail };
}

/**
 * The whole ledger against a recompute (every show); the detail shows this run's show. The ledger
 * adds each order.confirmed it applies, so an order applied twice (or lost) shows as a difference.
 */
export async function ledgerCheck(seat: Pool, consumers: Pool, showId: string): Promise<Check> {
  const ledger = await totalsFromLedger(consumers);
  const differences = compareTotals(ledger, await totalsFromSeatDatabase(seat));
  const mine = ledger.filter((row) => row.show_id === showId);
  const others = new Set(ledger.filter((row) => row.show_id !== showId).map((row) => row.show_id)).size;
  const detail = `${mine.map((row) => `${row.show_id}: ${row.orders} orders, ${row.seats} seats, ${(row.total_cents / 100).toFixed(2)} ${row.currency}`).join('; ') || `${showId}: no orders`}${others > 0 ? ` (and ${others} earlier shows)` : ''}`;
  return {
    name: 'sales ledger equals a recompute from the seat database',
    ok: differences.length === 0,
    detail: differences.length === 0 ? detail : JSON.stringify(differences),
  };
}

/**
 * One email per order of the run, by Message-ID (<ce_id@host>): an order without an email, or two
 * emails with one order's id (the mailbox keeps every message it received), fails.
 */
export async function emailCheck(seat: Pool, messageIds: readonly string[], since: Date): Promise<Check> {
  const { rows } = await seat.query<{ id: string }>(
    `select id::text from outbox where type = $1 and created_at >= $2`,
    [EVENTS.orderConfirmed.type, since],
  );
  const orders = new Set(rows.map((r) => r.id));
  // The Message-ID is <ce_id@host>; a mailbox shared with earlier runs (Mailpit) holds other orders' emails too.
  const ours = messageIds.map((id) => id.split('@')[0] ?? id).filter((id) => orders.has(id));
  const received = new Set(ours);
  const missing = rows.filter((r) => !received.has(r.id)).length;
  const duplicates = ours.length - received.size;
  return {
    name: 'one confirmation email per order',
    ok: missing === 0 && duplicates === 0,
    detail: `${ours.length} emails for ${rows.length} orders, ${missing} missing, ${duplicates} duplicates`,
  };
}
