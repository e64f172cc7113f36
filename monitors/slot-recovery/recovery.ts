/**
 * Lost-slot recovery for the outbox connector (docs/recovery.md): stop the connector, drop
 * the lost slot, reset its offsets, resume it on a fresh slot, re-emit the outbox rows since the
 * start time through an incremental snapshot, and check every inbox has them.
 */
import type { Logger } from '../../lib/logger.js';
import type { Reconciliation } from '../reconciliation/reconcile.js';
import { newPrimaryStep, repointStep, streamsFromNewPrimary, type DatabaseAddress } from './new-primary.js';
import { describeFailoverPlan, describePlan } from './plan.js';
import { autoStartTime, reEmitStep, verifyStep, type StartTime } from './re-emit.js';
import { dropStep, resetStep, resumeStep, stopStep } from './rebuild.js';
import {
  inspect,
  openRecoveryContext,
  type RebuildReason,
  type RecoveryContext,
  type SlotRecoveryConfig,
} from './recovery-context.js';

export interface RecoveryRequest {
  since: Date | 'auto';
  apply: boolean;
  /** After a failover without a synchronized slot (Postgres 15/16): where the connector reaches the promoted standby. */
  afterFailover?: DatabaseAddress;
}

export interface RecoveryOutcome {
  rebuilt: RebuildReason | 'failover' | undefined;
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
  ctx.logger.info(
    {
      connector: ctx.config.connectorName,
      slot: ctx.slotName,
      state: inspection.connectorState,
      rebuild: rebuilt ?? 'not needed',
    },
    'slot recovery starting',
  );
  if (rebuilt !== undefined) await stopStep(ctx);
  const start: StartTime =
    request.since === 'auto' ? await autoStartTime(ctx, rebuilt !== undefined) : { since: request.since };
  ctx.logger.info(
    { step: 'start-time', since: start.since.toISOString(), auto: request.since === 'auto' },
    're-emit start time chosen',
  );
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

/**
 * After a failover on Postgres 15/16 (docs/failover.md): the slot on the promoted standby first, so
 * writes may resume; then the connector is stopped, pointed at the new primary with its offsets
 * reset (they hold an LSN of the old primary's timeline, which may lie ahead of the new one's WAL
 * and would make Debezium skip new changes), resumed on the new slot, and the window re-emitted.
 * Always re-emits: what the old primary committed after Debezium's last flushed position is only
 * in the new primary's outbox. Run again once the connector streams from the new primary, it is the
 * lost-slot recovery's check: re-emit only what some inbox still lacks.
 */
async function applyFailoverRecovery(
  ctx: RecoveryContext,
  request: RecoveryRequest,
  address: DatabaseAddress,
): Promise<RecoveryOutcome> {
  ctx.logger.info(
    { connector: ctx.config.connectorName, slot: ctx.slotName, newPrimary: `${address.host}:${address.port}` },
    'recovery after a failover starting',
  );
  await newPrimaryStep(ctx);
  if (await streamsFromNewPrimary(ctx, address)) {
    ctx.logger.info(
      { step: 'repoint', connector: ctx.config.connectorName },
      'connector already streams from the new primary: only re-emitting what some inbox lacks',
    );
    return applyRecovery(ctx, request);
  }
  await stopStep(ctx);
  const start: StartTime = request.since === 'auto' ? await autoStartTime(ctx, true) : { since: request.since };
  ctx.logger.info(
    { step: 'start-time', since: start.since.toISOString(), auto: request.since === 'auto' },
    're-emit start time chosen',
  );
  await repointStep(ctx, address);
  await resetStep(ctx);
  await resumeStep(ctx);
  const signalledAt = await reEmitStep(ctx, start.since);
  const verification = ctx.config.verifyTimeoutMs > 0 ? await verifyStep(ctx, start.since, signalledAt) : undefined;
  return { rebuilt: 'failover', since: start.since, verification, plan: '' };
}

export async function recoverLostSlot(
  config: SlotRecoveryConfig,
  request: RecoveryRequest,
  logger: Logger,
): Promise<RecoveryOutcome> {
  const ctx = await openRecoveryContext(config, logger);
  try {
    const failover = request.afterFailover;
    if (request.apply)
      return failover === undefined
        ? await applyRecovery(ctx, request)
        : await applyFailoverRecovery(ctx, request, failover);
    const plan =
      failover === undefined
        ? await describePlan(ctx, await inspect(ctx), request.since)
        : await describeFailoverPlan(ctx, await inspect(ctx), request.since, failover);
    return { rebuilt: undefined, since: undefined, verification: undefined, plan };
  } finally {
    await ctx.close();
  }
}
