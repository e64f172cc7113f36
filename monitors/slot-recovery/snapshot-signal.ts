/**
 * Debezium signalling through the signal table: an ad hoc incremental snapshot of the outbox
 * limited to rows created since a time. The connector reads the insert from the WAL, so it must
 * be written after the (new) slot exists. The outbox router routes the snapshot's READ events
 * (op r) exactly like inserts, with the same ce_id header: consumers drop what they already have.
 */
import pg from 'pg';
import type { Pool } from '../../lib/postgres.js';

/** The table the outbox router reads (its predicate matches <prefix>.public.outbox). */
export const OUTBOX_TABLE = 'public.outbox';

export interface SnapshotSignal {
  id: string;
  type: 'execute-snapshot';
  data: string;
}

/** One id per start time: a second run for the same time finds its signal already sent. */
export function outboxSnapshotSignal(since: Date): SnapshotSignal {
  const data = {
    'data-collections': [OUTBOX_TABLE],
    type: 'incremental',
    // since.toISOString() is ours, never user text: nothing to escape in the filter.
    'additional-conditions': [{ 'data-collection': OUTBOX_TABLE, filter: `created_at >= '${since.toISOString()}'` }],
  };
  return { id: `slot-recovery-${since.toISOString()}`, type: 'execute-snapshot', data: JSON.stringify(data) };
}

/** "public.debezium_signal" → an escaped, schema-qualified name. */
function qualified(table: string): string {
  const parts = table.split('.');
  return parts.map((part) => pg.escapeIdentifier(part)).join('.');
}

/** Inserts the signal unless a signal with its id exists; true when this call sent it. */
export async function sendSignal(pool: Pool, signalTable: string, signal: SnapshotSignal): Promise<boolean> {
  const { rowCount } = await pool.query(
    /* sql */ `insert into ${qualified(signalTable)} (id, type, data) values ($1, $2, $3) on conflict (id) do nothing`,
    [signal.id, signal.type, signal.data],
  );
  return (rowCount ?? 0) > 0;
}

export async function signalSent(pool: Pool, signalTable: string, id: string): Promise<boolean> {
  const { rowCount } = await pool.query(/* sql */ `select 1 from ${qualified(signalTable)} where id = $1`, [id]);
  return (rowCount ?? 0) > 0;
}
