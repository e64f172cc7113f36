/** The replication slot as pg_replication_slots shows it, and dropping it once nobody holds it. */
import type { Pool } from '../../lib/postgres.js';
import { waitFor } from '../../lib/wait.js';

export type SlotCondition = { exists: false } | { exists: true; walStatus: string | null; active: boolean };

export async function readSlot(pool: Pool, slotName: string): Promise<SlotCondition> {
  const { rows } = await pool.query<{ wal_status: string | null; active: boolean }>(
    /* sql */ `select wal_status, active from pg_replication_slots where slot_name = $1`,
    [slotName],
  );
  const row = rows[0];
  return row === undefined ? { exists: false } : { exists: true, walStatus: row.wal_status, active: row.active };
}

export function describeSlot(slot: SlotCondition): string {
  if (!slot.exists) return 'missing';
  return `wal_status ${slot.walStatus ?? 'unknown'}, ${slot.active ? 'active' : 'inactive'}`;
}

/** Drops the slot once its reader has let go; a slot already gone counts as dropped. */
export async function dropSlot(pool: Pool, slotName: string, timeoutMs: number): Promise<void> {
  await waitFor(
    async () => {
      const slot = await readSlot(pool, slotName);
      if (!slot.exists) return true;
      if (slot.active) return false;
      await pool.query(
        /* sql */ `select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1 and not active`,
        [slotName],
      );
      return !(await readSlot(pool, slotName)).exists;
    },
    { timeoutMs, intervalMs: 250, description: `slot ${slotName} to be released by its reader and dropped` },
  );
}

/** Waits until the slot exists and a reader streams from it (the resumed connector created it). */
export async function waitForActiveSlot(pool: Pool, slotName: string, timeoutMs: number): Promise<void> {
  await waitFor(
    async () => {
      const slot = await readSlot(pool, slotName);
      return slot.exists && slot.active && slot.walStatus !== 'lost';
    },
    { timeoutMs, intervalMs: 250, description: `slot ${slotName} to exist again with the connector streaming from it` },
  );
}
