/** What every recovery step needs: the settings, pools, and the connector's slot and signal table. */
import { connectorState, liveConnectorConfig } from '../../connectors/connector-lifecycle.js';
import { PipelineError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { createPool, type Pool } from '../../lib/postgres.js';
import type { Config } from '../../lib/settings.js';
import { readSlot, type SlotCondition } from './slot-state.js';
import type { slotRecoverySettings } from './settings.js';

export type SlotRecoveryConfig = Config<typeof slotRecoverySettings.settings>;

export interface RecoveryContext {
  config: SlotRecoveryConfig;
  logger: Logger;
  seatPool: Pool;
  consumerPool: Pool;
  slotName: string;
  signalTable: string;
}

/** Opens the pools and reads the slot and signal table from the connector's live configuration. */
export async function openRecoveryContext(
  config: SlotRecoveryConfig,
  logger: Logger,
): Promise<RecoveryContext & { close: () => Promise<void> }> {
  const live = await liveConnectorConfig(config, config.connectorName);
  const slotName = live['slot.name'];
  const signalTable = live['signal.data.collection'];
  if (slotName === undefined || signalTable === undefined) {
    throw new PipelineError(
      'connector_not_signalling',
      `connector ${config.connectorName} has no ${slotName === undefined ? 'slot.name' : 'signal.data.collection'}: apply connectors/seat-outbox.json first (npm run connector -- apply)`,
    );
  }
  const seatPool = createPool({ connectionString: config.seatDbUrl, applicationName: 'slot-recovery', logger, max: 2 });
  const consumerPool = createPool({
    connectionString: config.consumerDbUrl,
    applicationName: 'slot-recovery',
    logger,
    max: 2,
  });
  const close = async () => {
    await Promise.allSettled([seatPool.end(), consumerPool.end()]);
  };
  return { config, logger, seatPool, consumerPool, slotName, signalTable, close };
}

export type RebuildReason = 'slot lost' | 'slot missing';

export interface Inspection {
  connectorState: string | undefined;
  slot: SlotCondition;
  /** Why the slot must be replaced; undefined when it is healthy (a re-run after a finished rebuild). */
  rebuild: RebuildReason | undefined;
}

export async function inspect(ctx: RecoveryContext): Promise<Inspection> {
  const [state, slot] = await Promise.all([
    connectorState(ctx.config, ctx.config.connectorName),
    readSlot(ctx.seatPool, ctx.slotName),
  ]);
  let rebuild: RebuildReason | undefined;
  if (!slot.exists) rebuild = 'slot missing';
  else if (slot.walStatus === 'lost') rebuild = 'slot lost';
  return { connectorState: state, slot, rebuild };
}
