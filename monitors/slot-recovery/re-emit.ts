/**
 * Step (e): pick the start time and re-emit the outbox rows written since then, then wait until
 * every consumer's inbox has them. Duplicates are expected: the inboxes drop them by ce_id.
 */
import { waitFor } from '../../lib/wait.js';
import { oldestGap, reconcile, seatDatabaseNow, type Reconciliation } from '../reconciliation/reconcile.js';
import { reconciliationSummary } from '../reconciliation/report.js';
import type { RecoveryContext } from './recovery-context.js';
import { outboxSnapshotSignal, sendSignal } from './snapshot-signal.js';

export interface StartTime {
  since: Date;
  /** The reconciliation behind --since auto. */
  reconciliation?: Reconciliation;
}

function reconcileWindow(ctx: RecoveryContext, from: Date, to: Date): Promise<Reconciliation> {
  const { consumers, pageSize } = ctx.config;
  return reconcile({
    seatPool: ctx.seatPool,
    consumerPool: ctx.consumerPool,
    consumers,
    from,
    to,
    pageSize,
    missingShown: 5,
  });
}

/**
 * --since auto: the oldest outbox row some consumer has not handled, minus the safety margin;
 * with no gap, the end of the checked window minus the margin. While the connector is stopped
 * nothing is in flight, so the window runs up to now; otherwise it stops RECONCILE_GRACE_MS short.
 */
export async function autoStartTime(ctx: RecoveryContext, connectorStopped: boolean): Promise<StartTime> {
  const now = await seatDatabaseNow(ctx.seatPool);
  const to = connectorStopped ? now : new Date(now.getTime() - ctx.config.graceMs);
  const reconciliation = await reconcileWindow(ctx, new Date(now.getTime() - ctx.config.windowMs), to);
  const base = oldestGap(reconciliation) ?? to;
  return { since: new Date(base.getTime() - ctx.config.safetyMarginMs), reconciliation };
}

/** Sends the snapshot signal (once per start time); returns the seat database time it was sent at. */
export async function reEmitStep(ctx: RecoveryContext, since: Date): Promise<Date> {
  const signal = outboxSnapshotSignal(since);
  const sent = await sendSignal(ctx.seatPool, ctx.signalTable, signal);
  const at = await seatDatabaseNow(ctx.seatPool);
  ctx.logger.info(
    { step: 're-emit', since: since.toISOString(), signal: signal.id, signalTable: ctx.signalTable },
    sent
      ? 'incremental snapshot of the outbox requested'
      : 'snapshot signal for this start time was already sent; not sending it again',
  );
  return at;
}

/** Waits until reconciliation over [since, until) shows no gaps; returns the final reconciliation. */
export async function verifyStep(ctx: RecoveryContext, since: Date, until: Date): Promise<Reconciliation> {
  let last: Reconciliation | undefined;
  try {
    return await waitFor(
      async () => {
        last = await reconcileWindow(ctx, since, until);
        return !last.gaps && last;
      },
      {
        timeoutMs: ctx.config.verifyTimeoutMs,
        intervalMs: 1000,
        description: 'every consumer to have handled every outbox row since the start time',
      },
    );
  } catch (err) {
    if (last === undefined) throw err;
    return last;
  } finally {
    if (last !== undefined)
      ctx.logger.info(
        { step: 'verify', ...reconciliationSummary(last) },
        last.gaps ? 'gaps remain' : 'no gaps since the start time',
      );
  }
}
