/** The dry run: what --apply would do, in order, and why; nothing is changed. */
import { describeReconciliation } from '../reconciliation/report.js';
import type { DatabaseAddress } from './new-primary.js';
import type { Inspection, RecoveryContext } from './recovery-context.js';
import { autoStartTime } from './re-emit.js';
import { describeSlot } from './slot-state.js';
import { OUTBOX_TABLE, outboxSnapshotSignal, signalSent } from './snapshot-signal.js';

function rebuildLines(ctx: RecoveryContext, inspection: Inspection): string[] {
  const name = ctx.config.connectorName;
  if (inspection.rebuild === undefined)
    return [`  steps 1-4 skipped: slot ${ctx.slotName} is not lost (${describeSlot(inspection.slot)})`];
  return [
    `  1. stop connector ${name} (PUT /connectors/${name}/stop)${inspection.connectorState === 'STOPPED' ? ': already stopped' : ''}`,
    `  2. drop slot ${ctx.slotName} (pg_drop_replication_slot)${inspection.slot.exists ? '' : ': already gone'}`,
    `  3. reset the connector's offsets (DELETE /connectors/${name}/offsets)`,
    `  4. resume it (PUT /connectors/${name}/resume): a fresh slot at the current WAL position (snapshot.mode=no_data)`,
  ];
}

async function startTimeLines(
  ctx: RecoveryContext,
  inspection: Inspection,
  since: Date | 'auto',
): Promise<{ lines: string[]; reEmit: boolean; at?: Date }> {
  if (since !== 'auto') return { lines: [`  start time: ${since.toISOString()} (given)`], reEmit: true, at: since };
  const start = await autoStartTime(ctx, inspection.connectorState === 'STOPPED');
  const lines = [
    `  start time (auto, as of now; computed again after the stop when applied): ${start.since.toISOString()}`,
    ...(start.reconciliation === undefined
      ? []
      : describeReconciliation(start.reconciliation)
          .trimEnd()
          .split('\n')
          .map((l) => `    ${l}`)),
  ];
  return { lines, reEmit: inspection.rebuild !== undefined || start.reconciliation?.gaps === true, at: start.since };
}

export async function describePlan(
  ctx: RecoveryContext,
  inspection: Inspection,
  since: Date | 'auto',
): Promise<string> {
  const head = `connector ${ctx.config.connectorName}: ${inspection.connectorState ?? 'unknown'}; slot ${ctx.slotName}: ${describeSlot(inspection.slot)}`;
  const start = await startTimeLines(ctx, inspection, since);
  const lines = [head, 'plan:', ...rebuildLines(ctx, inspection), ...start.lines];
  if (!start.reEmit || start.at === undefined) {
    lines.push('  5. re-emit skipped: no consumer is missing an event and the slot is healthy');
  } else {
    const signal = outboxSnapshotSignal(start.at);
    const already = (await signalSent(ctx.seatPool, ctx.signalTable, signal.id)) ? ' (already sent: skipped)' : '';
    lines.push(
      `  5. re-emit ${OUTBOX_TABLE} rows created since the start time: signal ${signal.id} into ${ctx.signalTable}${already}`,
    );
    const verify =
      ctx.config.verifyTimeoutMs > 0
        ? `wait up to ${ctx.config.verifyTimeoutMs / 1000} s until`
        : 'skipped (timeout 0); check that';
    lines.push(`  6. verify: ${verify} every consumer's inbox has every outbox row since the start time`);
  }
  lines.push('dry run: nothing changed. Run again with --apply to do it.');
  return `${lines.join('\n')}\n`;
}

/** The dry run of --after-failover: every step always runs (each skips what is already done). */
export async function describeFailoverPlan(
  ctx: RecoveryContext,
  inspection: Inspection,
  since: Date | 'auto',
  address: DatabaseAddress,
): Promise<string> {
  const name = ctx.config.connectorName;
  const { rows } = await ctx.seatPool.query<{ in_recovery: boolean }>(
    /* sql */ `select pg_is_in_recovery() as in_recovery`,
  );
  const promoted = rows[0]?.in_recovery === true ? 'STILL IN RECOVERY: promote it first' : 'promoted';
  const start = await startTimeLines(ctx, inspection, since);
  const signal = start.at === undefined ? undefined : outboxSnapshotSignal(start.at);
  const lines = [
    `after a failover: new primary ${promoted}; connector ${name}: ${inspection.connectorState ?? 'unknown'}; slot ${ctx.slotName} on the new primary: ${describeSlot(inspection.slot)}`,
    'plan:',
    `  1. check the publication and create slot ${ctx.slotName} (pgoutput) on the new primary${inspection.slot.exists ? ': already there' : ''}; writes may resume after this step`,
    `  2. stop connector ${name} (PUT /connectors/${name}/stop)${inspection.connectorState === 'STOPPED' ? ': already stopped' : ''}`,
    ...start.lines,
    `  3. point it at ${address.host}:${address.port} (database.hostname, database.port)`,
    `  4. reset its offsets (an LSN of the old primary's timeline) and resume it on the new slot`,
    `  5. re-emit ${OUTBOX_TABLE} rows created since the start time: signal ${signal?.id ?? '(at the start time)'} into ${ctx.signalTable}`,
    `  6. verify: every consumer's inbox has every outbox row since the start time${ctx.config.verifyTimeoutMs > 0 ? '' : ' (skipped: timeout 0)'}`,
    'dry run: nothing changed. Run again with --apply to do it.',
  ];
  return `${lines.join('\n')}\n`;
}
