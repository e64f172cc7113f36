/**
 * What the real consumers handled of a seat pipeline, read from independent sources: the seat
 * database's outbox and each consumer's inbox.
 */
import type { ConsumerDefinition } from '../../../consumers/runtime/types.js';
import type { Pool } from '../../../lib/postgres.js';
import { adminQuery } from '../../support/stack.js';

export interface OutboxRow {
  id: string;
  type: string;
}

export async function outboxRows(adminUrl: string): Promise<OutboxRow[]> {
  const { rows } = await adminQuery(adminUrl, 'select id::text, type from outbox');
  return rows as OutboxRow[];
}

/** The event ids in `consumer`'s inbox, sorted. */
export async function inboxIds(pool: Pool, consumer: string): Promise<string[]> {
  const { rows } = await pool.query<{ event_id: string }>('select event_id from inbox where consumer = $1', [consumer]);
  return rows.map((r) => r.event_id).sort();
}

/** The ids of the outbox rows of the types `definition` handles, sorted. */
export function handledIds(definition: ConsumerDefinition, rows: readonly OutboxRow[]): string[] {
  return rows
    .filter((row) => definition.eventTypes[row.type] !== undefined)
    .map((row) => row.id)
    .sort();
}

/** True once every consumer's inbox holds as many events as the outbox has of its types. */
export async function allHandled(
  adminUrl: string,
  pool: Pool,
  definitions: readonly ConsumerDefinition[],
): Promise<boolean> {
  const rows = await outboxRows(adminUrl);
  for (const definition of definitions)
    if ((await inboxIds(pool, definition.name)).length !== handledIds(definition, rows).length) return false;
  return true;
}
