/**
 * The connector's health as `npm run connector -- status` reports it: Connect's word and the
 * replication slot's. Debezium keeps a task RUNNING for about 30 minutes while it retries a slot
 * that is lost or missing, so Connect alone says all is well while nothing streams; the slot in
 * pg_replication_slots says otherwise at once.
 */
import { createPool } from '../lib/postgres.js';
import type { Logger } from '../lib/logger.js';
import { sleep } from '../lib/wait.js';
import { describeSlot, readSlot, type SlotCondition } from '../monitors/slot-recovery/slot-state.js';
import { connectorStatus, isRunning, type ConnectorStatus } from './connect-client.js';
import type { ConnectorConfig } from './outbox-connector.js';

export const SLOT_RECOVERY_COMMAND = 'npm run slot-recovery -- --since auto --apply';

export interface ConnectorHealth {
  status: ConnectorStatus;
  slot: { name: string; state: string };
  /** Why the connector is not streaming, with what to do; undefined when it is. */
  problem: string | undefined;
}

/** Why a connector Connect reports RUNNING does not stream from its slot; undefined when it does. */
export function slotProblem(slotName: string, slot: SlotCondition, graceMs: number): string | undefined {
  const retrying = 'Debezium keeps the task RUNNING while it retries (about 30 minutes) but nothing streams';
  if (!slot.exists)
    return `replication slot ${slotName} does not exist: ${retrying}. Recover the events written since with: ${SLOT_RECOVERY_COMMAND}`;
  if (slot.walStatus === 'lost') {
    return `replication slot ${slotName} is lost (wal_status lost: Postgres removed WAL it still needed): ${retrying}. Recover with: ${SLOT_RECOVERY_COMMAND}`;
  }
  if (!slot.active) {
    return `replication slot ${slotName} has had no reader for ${graceMs} ms although the task is RUNNING: the task is reconnecting or stuck; see the Connect log, and if the slot turns out lost or missing recover with: ${SLOT_RECOVERY_COMMAND}`;
  }
  return undefined;
}

/**
 * Reads the slot; an inactive one is read again until it is active or `graceMs` has passed, since
 * a task that has just (re)started takes a moment to attach.
 */
async function settledSlot(read: () => Promise<SlotCondition>, graceMs: number): Promise<SlotCondition> {
  const deadline = Date.now() + graceMs;
  let slot = await read();
  while (slot.exists && slot.walStatus !== 'lost' && !slot.active && Date.now() < deadline) {
    await sleep(250);
    slot = await read();
  }
  return slot;
}

/** Connect's status of the connector and its slot's; undefined when Connect does not know the connector. */
export async function connectorHealth(config: ConnectorConfig, logger: Logger): Promise<ConnectorHealth | undefined> {
  const status = await connectorStatus(config, config.connectorName);
  if (status === undefined) return undefined;
  const pool = createPool({ connectionString: config.seatDbUrl, applicationName: 'connector-status', logger, max: 1 });
  try {
    const running = isRunning(status);
    const slot = running
      ? await settledSlot(() => readSlot(pool, config.slotName), config.slotInactiveGraceMs)
      : await readSlot(pool, config.slotName);
    const problem = running
      ? slotProblem(config.slotName, slot, config.slotInactiveGraceMs)
      : `connector ${config.connectorName} is ${status.connector.state}, tasks ${status.tasks.map((t) => t.state).join(', ') || 'none'}: see the traces above; after fixing the cause run npm run connector -- restart`;
    return { status, slot: { name: config.slotName, state: describeSlot(slot) }, problem };
  } finally {
    await pool.end();
  }
}
