import type { Pool } from '../lib/postgres.js';
import { compareTotals, totalsFromLedger, totalsFromSeatDatabase } from '../consumers/sales-ledger/recompute.js';
import { EVENTS } from '../events/catalogue.js';

/** Which outbox rows each rehearsal consumer must have in its inbox. */
export const CONSUMER_SCOPES: Record<string, string> = {
  'seat-availability': `aggregatetype = 'seat'`,
  'confirmation-email': `type = '${EVENTS.orderConfirmed.type}'`,
  'sales-ledger': `type = '${EVENTS.orderConfirmed.type}'`,
};

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** Outbox rows written since `since`, per consumer scope, against that consumer's inbox rows for them. */
export async function drainProgress(seat: Pool, consumers: Pool, since: Date): Promise<{ consumer: string; published: number; handled: number }[]> {
  const rows = [];
  for (const [consumer, scope] of Object.entries(CONSUMER_SCOPES)) {
    const { rows: published } = await seat.query<{ id: string }>(`select id::text from outbox where created_at >= $1 and ${scope}`, [since]);
    const ids = published.map((r) => r.id);
    const { rows: handled } = await consumers.query<{ n: number }>(
      /* sql */ `select count(*)::int as n from inbox where consumer = $1 and event_id = any($2::text[])`,
      [consumer, ids],
    );
    rows.push({ consumer, published: ids.length, handled: handled[0]?.n ?? 0 });
  }
  return rows;
}

export async function oversoldCheck(seat: Pool): Promise<Check> {
  const { rows } = await seat.query<{ doubled: number; sold: number; sold_rows: number }>(/* sql */ `
    select (select count(*) from (select seat_id from order_seats group by seat_id having count(*) > 1) d)::int as doubled,
           (select count(*) from order_seats)::int as sold_rows,
           (select count(*) from seats where state = 'sold')::int as sold`);
  const r = rows[0] ?? { doubled: -1, sold: -1, sold_rows: -2 };
  return { name: 'no seat sold twice', ok: r.doubled === 0 && r.sold === r.sold_rows, detail: `${r.sold} seats sold, ${r.doubled} sold twice` };
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

export async function ledgerCheck(seat: Pool, consumers: Pool): Promise<Check> {
  const differences = compareTotals(await totalsFromLedger(consumers), await totalsFromSeatDatabase(seat));
  const ledger = await totalsFromLedger(consumers);
  const detail = ledger.map((row) => `${row.show_id}: ${row.orders} orders, ${row.seats} seats, ${(row.total_cents / 100).toFixed(2)} ${row.currency}`).join('; ');
  return { name: 'sales ledger equals a recompute from the seat database', ok: differences.length === 0, detail: differences.length === 0 ? detail : JSON.stringify(differences) };
}

export async function emailCheck(seat: Pool, messageIds: readonly string[], since: Date): Promise<Check> {
  const { rows } = await seat.query<{ id: string }>(`select id::text from outbox where type = $1 and created_at >= $2`, [EVENTS.orderConfirmed.type, since]);
  const received = new Set(messageIds.map((id) => id.split('@')[0] ?? id));
  const missing = rows.filter((r) => !received.has(r.id)).length;
  const duplicates = messageIds.length - new Set(messageIds).size;
  return { name: 'one confirmation email per order', ok: missing === 0 && duplicates === 0, detail: `${messageIds.length} emails for ${rows.length} orders, ${missing} missing, ${duplicates} duplicates` };
}

/** Commit-to-handled latency per consumer: inbox received_at minus outbox created_at. */
export async function latencies(seat: Pool, consumers: Pool, since: Date): Promise<{ consumer: string; p50: number; p99: number; max: number }[]> {
  const outbox = await seat.query<{ id: string; at: number }>(`select id::text, extract(epoch from created_at) * 1000 as at from outbox where created_at >= $1`, [since]);
  const written = new Map(outbox.rows.map((r) => [r.id, Number(r.at)]));
  const inbox = await consumers.query<{ consumer: string; event_id: string; at: number }>(`select consumer, event_id, extract(epoch from received_at) * 1000 as at from inbox`);
  const per = new Map<string, number[]>();
  for (const row of inbox.rows) {
    const at = written.get(row.event_id);
    if (at === undefined) continue;
    per.set(row.consumer, [...(per.get(row.consumer) ?? []), Number(row.at) - at]);
  }
  return [...per.entries()].map(([consumer, values]) => {
    const sorted = values.sort((a, b) => a - b);
    const pick = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
    return { consumer, p50: pick(0.5), p99: pick(0.99), max: Math.round(sorted.at(-1) ?? 0) };
  });
}
