/**
 * Recomputes the totals per show from the seat database (orders, order_seats) and compares them
 * with the ledger. Read it from a replica when there is one: the seat database's reads are for
 * the on-sale.
 */
import type { Pool } from '../../lib/postgres.js';

export interface LedgerRow {
  show_id: string;
  currency: string;
  orders: number;
  seats: number;
  total_cents: number;
}

export interface LedgerDifference {
  show_id: string;
  currency: string;
  ledger: LedgerRow | undefined;
  seatDatabase: LedgerRow | undefined;
}

export async function totalsFromSeatDatabase(seatPool: Pool): Promise<LedgerRow[]> {
  const result = await seatPool.query<LedgerRow>(/* sql */ `
    SELECT o.show_id, o.currency, count(*)::int AS orders, coalesce(sum(s.seats), 0)::int AS seats, sum(o.total_cents)::float8 AS total_cents
      FROM orders o
      LEFT JOIN (SELECT order_id, count(*) AS seats FROM order_seats GROUP BY order_id) s USING (order_id)
     GROUP BY o.show_id, o.currency`);
  return result.rows;
}

export async function totalsFromLedger(consumerPool: Pool): Promise<LedgerRow[]> {
  const result = await consumerPool.query<LedgerRow>(
    /* sql */ `SELECT show_id, currency, orders, seats, total_cents::float8 AS total_cents FROM sales_ledger_totals`,
  );
  return result.rows;
}

function sameTotals(a: LedgerRow | undefined, b: LedgerRow | undefined): boolean {
  return (
    a !== undefined &&
    b !== undefined &&
    a.orders === b.orders &&
    a.seats === b.seats &&
    a.total_cents === b.total_cents
  );
}

export function compareTotals(ledger: readonly LedgerRow[], seatDatabase: readonly LedgerRow[]): LedgerDifference[] {
  const keyOf = (row: LedgerRow): string => `${row.show_id}\u0000${row.currency}`;
  const fromLedger = new Map(ledger.map((row) => [keyOf(row), row]));
  const fromSeats = new Map(seatDatabase.map((row) => [keyOf(row), row]));
  const differences: LedgerDifference[] = [];
  for (const key of [...new Set([...fromLedger.keys(), ...fromSeats.keys()])].sort()) {
    const a = fromLedger.get(key);
    const b = fromSeats.get(key);
    if (!sameTotals(a, b)) {
      const [show_id = '', currency = ''] = key.split('\u0000');
      differences.push({ show_id, currency, ledger: a, seatDatabase: b });
    }
  }
  return differences;
}

export function describeDifferences(differences: readonly LedgerDifference[], showsCompared: number): string {
  if (differences.length === 0)
    return `sales ledger matches the seat database (${showsCompared} show totals compared)\n`;
  const shown = (row: LedgerRow | undefined): string =>
    row ? `orders ${row.orders}, seats ${row.seats}, cents ${row.total_cents}` : 'missing';
  const lines = [`sales ledger differs from the seat database for ${differences.length} show total(s):`];
  for (const d of differences)
    lines.push(`  ${d.show_id} ${d.currency}: ledger ${shown(d.ledger)} | seat database ${shown(d.seatDatabase)}`);
  return `${lines.join('\n')}\n`;
}
