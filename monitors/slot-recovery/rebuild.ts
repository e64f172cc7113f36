/**
 * Steps (a) to (d): replace the lost slot. Each step checks first whether it is already done, so
 * a second run after an interruption picks up where the first one stopped.
 */
import { waitUntilRunning } from '../../connectors/connect-client.js';
import {
  connectorState,
  resetConnectorOffsets,
  resumeConnector,
  stopConnector,
} from '../../connectors/connector-lifecycle.js';
import { waitFor } from '../../lib/wait.js';
import type { RecoveryContext } from './recovery-context.js';
import { dropSlot, readSlot, waitForActiveSlot } from './slot-state.js';

/** (a) Stop: the task exits and lets go of the slot; Debezium would otherwise retry the dead slot for ~30 minutes. */
export async function stopStep(ctx: RecoveryContext): Promise<void> {
  const { connectorName, stepTimeoutMs } = ctx.config;
  if ((await connectorState(ctx.config, connectorName)) === 'STOPPED') {
    ctx.logger.info({ step: 'stop', connector: connectorName }, 'connector already stopped');
    return;
  }
  await stopConnector(ctx.config, connectorName);
  await waitFor(async () => (await connectorState(ctx.config, connectorName)) === 'STOPPED', {
    timeoutMs: stepTimeoutMs,
    intervalMs: 250,
    description: `connector ${connectorName} to be STOPPED`,
  });
  ctx.logger.info({ step: 'stop', connector: connectorName }, 'connector stopped');
}

/** (b) Drop the lost slot: a lost slot can never stream again, and the connector would try to reuse it by name. */
export async function dropStep(ctx: RecoveryContext): Promise<void> {
  if (!(await readSlot(ctx.seatPool, ctx.slotName)).exists) {
    ctx.logger.info({ step: 'drop-slot', slot: ctx.slotName }, 'slot already gone');
    return;
  }
  await dropSlot(ctx.seatPool, ctx.slotName, ctx.config.stepTimeoutMs);
  ctx.logger.info({ step: 'drop-slot', slot: ctx.slotName }, 'lost slot dropped');
}

/** (c) Reset offsets: the stored LSN points into WAL that no longer exists; without offsets the connector starts afresh. */
export async function resetStep(ctx: RecoveryContext): Promise<void> {
  await resetConnectorOffsets(ctx.config, ctx.config.connectorName);
  ctx.logger.info({ step: 'reset-offsets', connector: ctx.config.connectorName }, 'connector offsets reset');
}

/** (d) Resume: with no offsets and snapshot.mode=no_data the connector creates the slot at the current WAL position and streams from there. */
export async function resumeStep(ctx: RecoveryContext): Promise<void> {
  const { connectorName, stepTimeoutMs } = ctx.config;
  await resumeConnector(ctx.config, connectorName);
  await waitUntilRunning(ctx.config, connectorName, stepTimeoutMs);
  await waitForActiveSlot(ctx.seatPool, ctx.slotName, stepTimeoutMs);
  ctx.logger.info(
    { step: 'resume', connector: connectorName, slot: ctx.slotName },
    'connector running on a fresh slot',
  );
}
