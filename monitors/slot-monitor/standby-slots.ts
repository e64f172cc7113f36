/**
 * The seat database with standbys (SLOT_MONITOR_STANDBY_URLS, Postgres 17+): each poll asks every
 * node pg_is_in_recovery() and watches the one that is not as the primary, so the monitor follows
 * a failover by itself. On each standby it checks the primary's failover slots are synchronized
 * (pg_replication_slots.synced, not temporary, not invalidated) and not far behind the primary's
 * confirmed_flush_lsn: a promotion only carries the connector over on such a slot.
 */
import pg from 'pg';
import { errorMessage } from '../../lib/errors.js';
import type { AlertCandidate } from './alert-tracker.js';
import { formatBytes } from './byte-size.js';
import type { Queryable } from './monitor-role.js';
import { SLOT_ALERTS } from '../alerts/slot-alerts.js';

export interface StandbyRules {
  /** The other nodes of the seat database (the monitor role's URLs); empty: one node, nothing here applies. */
  standbyUrls: readonly string[];
  standbySlotMaxLagBytes: number;
  /** Required slots; empty: every failover slot of the primary. */
  slots: readonly string[];
}

export interface SeatNode {
  url: string;
  /** `host:port/database`. */
  label: string;
}

/** One standby's view of one slot the primary has. */
export interface StandbySlotState {
  slotName: string;
  standby: string;
  /** Synchronized, persisted and valid: a promotion keeps it. */
  synced: boolean;
  /** Primary's confirmed_flush_lsn minus the standby's copy's; null when the copy has none. */
  lagBytes: number | null;
}

export function nodeLabel(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
}

/** A short-lived connection to one node (the standbys, and the primary when it is not the configured database). */
export async function withNodeClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 5000,
    application_name: 'slot-monitor',
  });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function inRecovery(db: Queryable): Promise<boolean> {
  const { rows } = await db.query(/* sql */ `select pg_is_in_recovery() as recovering`);
  return (rows[0] as { recovering: boolean }).recovering;
}

/**
 * Which node is the primary now: the configured database if it answers and is not in recovery,
 * otherwise the first standby URL that is. Throws (the unreachable alert) when none is.
 */
export async function findPrimary(
  db: Queryable,
  databaseUrl: string,
  rules: StandbyRules,
): Promise<{ primary: SeatNode; standbys: SeatNode[] }> {
  const nodes = [databaseUrl, ...rules.standbyUrls].map((url) => ({ url, label: nodeLabel(url) }));
  const seen: string[] = [];
  for (const [index, node] of nodes.entries()) {
    try {
      const recovering = index === 0 ? await inRecovery(db) : await withNodeClient(node.url, inRecovery);
      if (!recovering) return { primary: node, standbys: nodes.filter((other) => other !== node) };
      seen.push(`${node.label} is a standby`);
    } catch (err) {
      seen.push(`${node.label}: ${errorMessage(err)}`);
    }
  }
  throw new Error(`no node of the seat database is a primary (${seen.join('; ')})`);
}

export interface PrimarySlot {
  slot_name: string;
  failover: boolean;
  flushed: string | null;
}

export interface StandbySlot {
  slot_name: string;
  synced: boolean;
  temporary: boolean;
  invalidation_reason: string | null;
  flushed: string | null;
}

const PRIMARY_SLOTS_SQL = /* sql */ `
  select slot_name, failover, pg_wal_lsn_diff(confirmed_flush_lsn, '0/0')::bigint::text as flushed
    from pg_catalog.pg_replication_slots where slot_type = 'logical'`;
const STANDBY_SLOTS_SQL = /* sql */ `
  select slot_name, synced, temporary, invalidation_reason, pg_wal_lsn_diff(confirmed_flush_lsn, '0/0')::bigint::text as flushed
    from pg_catalog.pg_replication_slots where slot_type = 'logical'`;

/** The standby slot alerts of one poll, and each watched slot's state on each standby (for the metrics). */
export async function standbySlotConditions(
  primaryDb: Queryable,
  standbys: readonly SeatNode[],
  rules: StandbyRules,
): Promise<{ candidates: AlertCandidate[]; states: StandbySlotState[] }> {
  const primarySlots = (await primaryDb.query(PRIMARY_SLOTS_SQL)).rows as PrimarySlot[];
  const watched =
    rules.slots.length === 0
      ? primarySlots.filter((s) => s.failover)
      : primarySlots.filter((s) => rules.slots.includes(s.slot_name));
  const candidates: AlertCandidate[] = [];
  const states: StandbySlotState[] = [];
  for (const standby of standbys) {
    let copies: Map<string, StandbySlot>;
    try {
      copies = new Map(
        (
          (await withNodeClient(standby.url, async (c) => (await c.query(STANDBY_SLOTS_SQL)).rows)) as StandbySlot[]
        ).map((s) => [s.slot_name, s]),
      );
    } catch (err) {
      for (const slot of watched) {
        states.push({ slotName: slot.slot_name, standby: standby.label, synced: false, lagBytes: null });
        candidates.push(
          notSynchronized(slot.slot_name, standby.label, `the monitor cannot read the standby: ${errorMessage(err)}`),
        );
      }
      continue;
    }
    for (const slot of watched) {
      const judged = judgeStandbyCopy(slot, copies.get(slot.slot_name), standby.label, rules.standbySlotMaxLagBytes);
      states.push(judged.state);
      if (judged.candidate) candidates.push(judged.candidate);
    }
  }
  return { candidates, states };
}

/** One failover slot's copy on one standby: its state for the metrics, and the alert it raises if any. Pure. */
export function judgeStandbyCopy(
  slot: PrimarySlot,
  copy: StandbySlot | undefined,
  standby: string,
  maxLagBytes: number,
): { state: StandbySlotState; candidate: AlertCandidate | undefined } {
  const problem = copyProblem(slot, copy);
  const lagBytes =
    copy?.flushed != null && slot.flushed !== null ? Math.max(0, Number(slot.flushed) - Number(copy.flushed)) : null;
  const state = { slotName: slot.slot_name, standby, synced: problem === undefined, lagBytes };
  if (problem !== undefined) return { state, candidate: notSynchronized(slot.slot_name, standby, problem) };
  if (lagBytes !== null && lagBytes > maxLagBytes)
    return { state, candidate: behind(slot.slot_name, standby, lagBytes, maxLagBytes) };
  return { state, candidate: undefined };
}

function copyProblem(slot: PrimarySlot, copy: StandbySlot | undefined): string | undefined {
  if (!slot.failover)
    return 'the slot on the primary was not created as a failover slot (Debezium slot.failover, CONNECTOR_SLOT_FAILOVER=yes), so it is never synchronized';
  if (copy === undefined)
    return 'the standby has no copy of it (is sync_replication_slots on, and primary_conninfo naming a dbname?)';
  if (copy.invalidation_reason !== null) return `the standby's copy is invalidated (${copy.invalidation_reason})`;
  if (!copy.synced)
    return 'the standby has a slot of that name that is not synchronized from the primary (synced = false)';
  if (copy.temporary) return "the standby's copy is not sync-ready yet (temporary): a promotion now would drop it";
  return undefined;
}

function notSynchronized(slotName: string, standby: string, problem: string): AlertCandidate {
  return {
    name: 'StandbySlotNotSynchronized',
    labels: { slot_name: slotName, standby },
    summary: SLOT_ALERTS.StandbySlotNotSynchronized.summary({ slot: slotName, standby }),
    description: `Slot ${slotName} on standby ${standby}: ${problem}.`,
  };
}

function behind(slotName: string, standby: string, lagBytes: number, maxBytes: number): AlertCandidate {
  return {
    name: 'StandbySlotBehind',
    labels: { slot_name: slotName, standby },
    summary: SLOT_ALERTS.StandbySlotBehind.summary({ slot: slotName, standby, lag: formatBytes(lagBytes) }),
    description: `confirmed_flush_lsn of ${slotName} on the standby trails the primary's by ${formatBytes(lagBytes)} (threshold ${formatBytes(maxBytes)}, SLOT_MONITOR_STANDBY_SLOT_MAX_LAG).`,
  };
}
