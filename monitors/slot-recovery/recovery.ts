/**
 * Lost-slot recovery for the outbox connector (docs/recovery.md): stop the connector, drop
 * the lost slot, reset its offsets, resume it on a fresh slot, re-emit the outbox rows since the
 * start time through an incremental snapshot, and check every inbox has them.
 */
import type { Logger } from '../../lib/logger.js';
import type { Reconciliation } from '../reconciliation/reconcile.js';
import { describePlan } from './plan.js';
import { autoStartTime, reEmitStep, verifyStep, type StartTime } from './re-emit.js';
import { dropStep, resetStep, resumeStep, stopStep } from './rebuild.js';
import { inspect, openRecoveryContext, type RebuildReason, type RecoveryContext, type SlotRecoveryConfig } from './recovery-context.js';

export interface RecoveryRequest {
  since: Date | 'auto';
  apply: boolean;
}

export interface RecoveryOutcome {
  rebuilt: RebuildReason | undefined;
  /** Start time of the re-emit; undefined when nothing was re-emitted. */
  since: Date | undefined;
  /** The reconciliation after the re-emit (gaps false when every inbox caught up). */
  verification: Reconciliation | undefined;
  /** The dry run's plan; empty when applied. */
  plan: string;
}

async function applyRecovery(ctx: RecoveryContext, request: RecoveryRequest): Promise<RecoveryOutcome> {
  const inspection = await inspect(ctx);
  const rebuilt = inspection.rebuild;
  ctx.logger.info({ connector: ctx.config.connectorName, slot: ctx.slotName, state: inspection.connectorState, rebuild: rebuilt ?? 'not needed' }, 'slot recovery starting');
  if (rebuilt !== undefined) await stopStep(ctx);
  const start: StartTime = request.since === 'auto' ? await autoStartTime(ctx, rebuilt !== undefined) : { since: request.since };
  ctx.logger.info({ step: 'start-time', since: start.since.toISOString(), auto: request.since === 'auto' }, 're-emit start time chosen');
  if (rebuilt !== undefined) {
    await dropStep(ctx);
    await resetStep(ctx);
    await resumeStep(ctx);
  }
  if (rebuilt === undefined && start.reconciliation?.gaps === false) {
    ctx.logger.info({ step: 're-emit' }, 'slot healthy and no consumer is missing an event: nothing to re-emit');
    return { rebuilt, since: undefined, verification: start.reconciliation, plan: '' };
  }
  const signalledAt = await reEmitStep(ctx, start.since);
  const verification = ctx.config.verifyTimeoutMs > 0 ? await verifyStep(ctx, start.since, signalledAt) : undefined;
  return { rebuilt, since: start.since, verification, plan: '' };
}

export async function recoverLostSlot(config: SlotRecoveryConfig, request: RecoveryRequest, logger: Logger): Promise<RecoveryOutcome> {
  const ctx = await openRecoveryContext(config, logger);
  try {
    if (request.apply) return await applyRecovery(ctx, request);
    const plan = await describePlan(ctx, await inspect(ctx), request.since);
    return { rebuilt: undefined, since: undefined, verification: undefined, plan };
  } finally {
    await ctx.close();
  }
}
