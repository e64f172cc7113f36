/**
 * `npm run connector -- delete`: removes the connector and drops its replication slot, since a slot
 * nobody reads retains WAL until the cap invalidates it (or the disk fills). It says what it will
 * do (the connector, its slot, the WAL the slot retains) and does nothing without --yes; it never
 * prompts, so it cannot hang without a terminal. --keep-slot leaves the slot, for a connector
 * re-created at once that should resume where this one stopped.
 */
import { PipelineError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { type Pool, createPool } from '../lib/postgres.js';
import { formatBytes } from '../monitors/slot-monitor/byte-size.js';
import { dropSlot } from '../monitors/slot-recovery/slot-state.js';
import { connectorStatus, deleteConnector } from './connect-client.js';
import { liveConnectorConfig } from './connector-lifecycle.js';
import type { ConnectorConfig } from './outbox-connector.js';

export interface DeleteOptions {
  yes: boolean;
  keepSlot: boolean;
}

interface SlotFacts {
  active: boolean;
  activePid: number | null;
  walStatus: string | null;
  /** WAL the slot holds back (from restart_lsn to the current position); null on a standby. */
  retainedBytes: number | null;
}

interface DeletePlan {
  connector: string;
  /** Connect's state of the connector, or undefined when Connect does not know it. */
  connectorState: string | undefined;
  slotName: string;
  /** Undefined when the slot does not exist. */
  slot: SlotFacts | undefined;
}

/** How long delete waits for the stopped task to let go of the slot before it gives up. */
const SLOT_RELEASE_TIMEOUT_MS = 60_000;

async function readSlotFacts(pool: Pool, slotName: string): Promise<SlotFacts | undefined> {
  const { rows } = await pool.query<{
    active: boolean;
    active_pid: number | null;
    wal_status: string | null;
    retained: string | null;
  }>(
    /* sql */ `select active, active_pid, wal_status,
                      case when pg_is_in_recovery() then null else pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint end as retained
                 from pg_replication_slots where slot_name = $1`,
    [slotName],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    active: row.active,
    activePid: row.active_pid,
    walStatus: row.wal_status,
    retainedBytes: row.retained === null ? null : Number(row.retained),
  };
}

/** The connector's facts: its slot is the one its live configuration names (SLOT_NAME when Connect has no such connector). */
async function planDelete(config: ConnectorConfig, pool: Pool): Promise<DeletePlan> {
  const status = await connectorStatus(config, config.connectorName);
  const live =
    status === undefined ? undefined : await liveConnectorConfig(config, config.connectorName).catch(() => undefined);
  const slotName = live?.['slot.name'] ?? config.slotName;
  return {
    connector: config.connectorName,
    connectorState: status?.connector.state,
    slotName,
    slot: await readSlotFacts(pool, slotName),
  };
}

function describeSlotFacts(plan: DeletePlan): string {
  const { slot, slotName } = plan;
  if (slot === undefined) return `replication slot ${slotName} does not exist`;
  const retained =
    slot.retainedBytes === null
      ? 'an unknown amount of WAL (read on a standby)'
      : `${formatBytes(slot.retainedBytes)} of WAL`;
  return `replication slot ${slotName} (wal_status ${slot.walStatus ?? 'unknown'}, ${slot.active ? `active, pid ${slot.activePid}` : 'inactive'}) retains ${retained}`;
}

/** What delete will do, in sentences, for the plan and the flags. */
function describeDelete(plan: DeletePlan, options: DeleteOptions): string[] {
  const connector =
    plan.connectorState === undefined
      ? `connector ${plan.connector} does not exist in Connect`
      : `connector ${plan.connector} (${plan.connectorState})`;
  const lines = [connector, describeSlotFacts(plan)];
  const steps: string[] = [];
  if (plan.connectorState !== undefined) steps.push(`delete connector ${plan.connector}`);
  if (plan.slot !== undefined && !options.keepSlot)
    steps.push(`drop replication slot ${plan.slotName} once the task has let go of it, releasing its WAL`);
  if (plan.slot !== undefined && !options.keepSlot) {
    // A connector made again starts with no snapshot (snapshot.mode no_data) at the new slot's position.
    lines.push(
      `if the slot is behind, outbox rows committed since its last confirmation are not on Kafka and, once it is dropped, reach Kafka only through npm run slot-recovery (docs/recovery.md); --keep-slot keeps them streamable`,
    );
  }
  if (plan.slot !== undefined && options.keepSlot) {
    lines.push(
      `--keep-slot: slot ${plan.slotName} stays and keeps retaining WAL until a connector reads it again or it is dropped (npm run connector -- delete --yes)`,
    );
  }
  lines.push(steps.length === 0 ? 'nothing to do' : `will ${steps.join(', then ')}`);
  return lines;
}

/** Deletes the connector, then drops its slot once the stopped task has released it (unless keepSlot). */
async function executeDelete(
  config: ConnectorConfig,
  pool: Pool,
  plan: DeletePlan,
  options: DeleteOptions,
): Promise<string[]> {
  const done: string[] = [];
  if (plan.connectorState !== undefined) {
    await deleteConnector(config, plan.connector);
    done.push(`deleted connector ${plan.connector}`);
  }
  if (plan.slot === undefined || options.keepSlot) return done;
  try {
    await dropSlot(pool, plan.slotName, SLOT_RELEASE_TIMEOUT_MS);
  } catch (cause) {
    const slot = await readSlotFacts(pool, plan.slotName).catch(() => undefined);
    throw new PipelineError(
      'slot_not_dropped',
      `${done.join('; ') || 'the connector was already gone'}, but replication slot ${plan.slotName} is still ${slot?.active ? `read by pid ${slot.activePid}` : 'there'} ` +
        `after ${SLOT_RELEASE_TIMEOUT_MS / 1000} s: another connector or a Connect worker still streams from it. Find it (select * from pg_stat_replication where pid = ${slot?.activePid ?? '<pid>'}), ` +
        'stop it, and run npm run connector -- delete --yes again',
      { cause },
    );
  }
  done.push(`dropped replication slot ${plan.slotName}`);
  return done;
}

/** The delete command: the plan, then a refusal without --yes (exit 2) or the deletion (exit 0). */
export async function runDelete(
  config: ConnectorConfig,
  options: DeleteOptions,
  logger: Logger,
  out: (line: string) => void,
): Promise<number> {
  const pool = createPool({ connectionString: config.seatDbUrl, applicationName: 'connector-delete', logger, max: 1 });
  try {
    const plan = await planDelete(config, pool);
    for (const line of describeDelete(plan, options)) out(line);
    if (plan.connectorState === undefined && (plan.slot === undefined || options.keepSlot)) return 0;
    if (!options.yes) {
      out(
        'refusing without confirmation: nothing was changed. Run it again with --yes to do this (--keep-slot to leave the slot).',
      );
      return 2;
    }
    for (const line of await executeDelete(config, pool, plan, options)) out(line);
    return 0;
  } finally {
    await pool.end();
  }
}
