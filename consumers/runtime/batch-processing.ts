/**
 * One partition's batch: runs of decodable records are applied as a group (one consumer-database
 * transaction, offsets committed after it). A transient failure retries the same group; a poison
 * failure, or a group event past its deadline, falls back to record-by-record processing, which
 * finds the poison and dead-letters it while the good records around it are applied.
 */
import { retryDelay } from '../../lib/wait.js';
import { decodeCloudEvent } from './cloud-event.js';
import type { PartitionControl, ProcessingContext } from './context.js';
import { type Delivery, deadlineStartMs } from './delivery.js';
import { classifyFailure } from './failures.js';
import { applyDeliveries, processRecordAlone } from './record-processing.js';
import type { SourceRecord } from './types.js';

interface DecodedRun {
  deliveries: Delivery[];
  /** True when the run stopped at a record that does not decode (it is processed alone). */
  stoppedAtFailure: boolean;
}

async function decodeRun(ctx: ProcessingContext, records: readonly SourceRecord[], from: number): Promise<DecodedRun> {
  const deliveries: Delivery[] = [];
  for (const record of records.slice(from)) {
    try {
      deliveries.push({ record, event: await decodeCloudEvent(ctx.registry, record, ctx.definition.eventTypes) });
    } catch {
      return { deliveries, stoppedAtFailure: true };
    }
  }
  return { deliveries, stoppedAtFailure: false };
}

type GroupOutcome = 'done' | 'isolate' | 'abandoned';

function msUntilEarliestDeadline(ctx: ProcessingContext, deliveries: readonly Delivery[]): number {
  const earliest = Math.min(...deliveries.map((d) => deadlineStartMs(d.record)));
  return earliest + ctx.policy.deadlineMs - Date.now();
}

async function applyGroupWithRetry(ctx: ProcessingContext, control: PartitionControl, deliveries: readonly Delivery[]): Promise<GroupOutcome> {
  for (let attempt = 0; control.active(); attempt += 1) {
    try {
      await applyDeliveries(ctx, control, deliveries);
      return 'done';
    } catch (err) {
      const failure = classifyFailure(err);
      const untilDeadline = msUntilEarliestDeadline(ctx, deliveries);
      if (failure.kind === 'poison' || deliveries.length === 1 || untilDeadline <= 0) return 'isolate';
      const delayMs = Math.min(retryDelay({ attempt, baseMs: ctx.policy.retryBaseMs, capMs: ctx.policy.retryCapMs }), untilDeadline + 10);
      ctx.logger.warn(
        { consumer: ctx.definition.name, topic: control.topic, partition: control.partition, size: deliveries.length, error: failure.message, attempt: attempt + 1, delayMs },
        'batch failed with a transient error; retrying the same batch',
      );
      ctx.events.emit('retry', { topic: control.topic, partition: control.partition, kind: 'transient', attempt: attempt + 1, delayMs });
      if (!(await control.pause(delayMs))) return 'abandoned';
    }
  }
  return 'abandoned';
}

async function processEachAlone(ctx: ProcessingContext, control: PartitionControl, deliveries: readonly Delivery[]): Promise<boolean> {
  for (const { record } of deliveries) {
    if ((await processRecordAlone(ctx, control, record)) === 'abandoned') return false;
  }
  return true;
}

/** Processes the batch's records in offset order; returns early (uncommitted) when the batch is abandoned. */
export async function processBatch(ctx: ProcessingContext, control: PartitionControl, records: readonly SourceRecord[]): Promise<void> {
  let index = 0;
  while (index < records.length && control.active()) {
    const run = await decodeRun(ctx, records, index);
    if (run.deliveries.length > 0) {
      const outcome = await applyGroupWithRetry(ctx, control, run.deliveries);
      if (outcome === 'abandoned') return;
      if (outcome === 'isolate' && !(await processEachAlone(ctx, control, run.deliveries))) return;
      index += run.deliveries.length;
    }
    const failed = run.stoppedAtFailure ? records[index] : undefined;
    if (failed !== undefined) {
      if ((await processRecordAlone(ctx, control, failed)) === 'abandoned') return;
      index += 1;
    }
  }
}
