/**
 * One record on its own: decode and apply, retrying the same record (nothing behind it moves).
 * Transient failures retry until the event's deadline, poison until the delivery limit; then the
 * record is dead-lettered and the partition moves on.
 */
import { retryDelay } from '../../lib/wait.js';
import { applyGroup } from './apply-effects.js';
import { decodeCloudEvent } from './cloud-event.js';
import type { PartitionControl, ProcessingContext } from './context.js';
import { sendToDeadLetterTopic } from './dead-letter.js';
import { type Delivery, deadlineStartMs, recordIds } from './delivery.js';
import { headerValue } from './headers.js';
import { type FailureClass, classifyFailure } from './failures.js';
import type { SourceRecord } from './types.js';

export type RecordOutcome = 'done' | 'abandoned';

/** Applies the group's events (one transaction or claim by claim), reports them, commits the offsets. */
export async function applyDeliveries(ctx: ProcessingContext, control: PartitionControl, deliveries: readonly Delivery[]): Promise<void> {
  const events = deliveries.flatMap((d) => (d.event === undefined ? [] : [d.event]));
  const outcome = await applyGroup(ctx, events);
  const where = { topic: control.topic, partition: control.partition };
  for (const event of outcome.applied) {
    ctx.events.emit('applied', { ...where, type: event.type, count: 1 });
    ctx.events.emit('eventHandled', { ...where, ageMs: Date.now() - event.timeMs });
  }
  if (outcome.duplicates > 0) ctx.events.emit('duplicate', { ...where, count: outcome.duplicates });
  for (const d of deliveries) if (d.event === undefined) ctx.events.emit('skipped', { ...where, type: headerValue(d.record.headers, 'ce_type') ?? '' });
  const last = deliveries.at(-1);
  if (last !== undefined) await control.commitThrough(last.record.offset);
}

async function decodeAndApply(ctx: ProcessingContext, control: PartitionControl, record: SourceRecord): Promise<void> {
  const event = await decodeCloudEvent(ctx.registry, record, ctx.definition.eventTypes);
  await applyDeliveries(ctx, control, [{ record, event }]);
}

interface FailureState {
  attempts: number;
  firstFailureAt: Date;
}

/** Dead-letters the record when the failure says so; otherwise how long to wait before the next attempt. */
function nextStep(ctx: ProcessingContext, record: SourceRecord, failure: FailureClass, state: FailureState): { deadLetter: true } | { deadLetter: false; delayMs: number } {
  const { policy } = ctx;
  const delayMs = retryDelay({ attempt: state.attempts - 1, baseMs: policy.retryBaseMs, capMs: policy.retryCapMs });
  if (failure.kind === 'poison') {
    return state.attempts >= policy.deliveryLimit ? { deadLetter: true } : { deadLetter: false, delayMs };
  }
  const untilDeadline = deadlineStartMs(record) + policy.deadlineMs - Date.now();
  if (untilDeadline <= 0) return { deadLetter: true };
  return { deadLetter: false, delayMs: Math.min(delayMs, untilDeadline + 10) };
}

async function deadLetter(ctx: ProcessingContext, control: PartitionControl, record: SourceRecord, failure: FailureClass, state: FailureState): Promise<void> {
  const reason = failure.kind === 'poison' ? failure.reason : 'deadline exceeded';
  const consumer = ctx.definition.name;
  await sendToDeadLetterTopic(ctx.producer, record, { reason, error: failure.message, firstFailureAt: state.firstFailureAt, attempts: state.attempts, consumer });
  ctx.logger.error({ ...recordIds(record, consumer), reason, error: failure.message, attempts: state.attempts }, `dead-lettered: ${reason}`);
  ctx.events.emit('deadLettered', { topic: record.topic, partition: record.partition, reason });
  await control.commitThrough(record.offset);
}

/** Processes `record` alone until it is applied, skipped or dead-lettered, or the batch is abandoned. */
export async function processRecordAlone(ctx: ProcessingContext, control: PartitionControl, record: SourceRecord): Promise<RecordOutcome> {
  let state: FailureState | undefined;
  while (control.active()) {
    try {
      await decodeAndApply(ctx, control, record);
      return 'done';
    } catch (err) {
      const failure = classifyFailure(err);
      state = { attempts: (state?.attempts ?? 0) + 1, firstFailureAt: state?.firstFailureAt ?? new Date() };
      const step = nextStep(ctx, record, failure, state);
      if (step.deadLetter) {
        await deadLetter(ctx, control, record, failure, state);
        return 'done';
      }
      ctx.logger.warn({ ...recordIds(record, ctx.definition.name), kind: failure.kind, error: failure.message, attempt: state.attempts, delayMs: step.delayMs }, 'delivery failed; retrying the same record');
      ctx.events.emit('retry', { topic: record.topic, partition: record.partition, kind: failure.kind, attempt: state.attempts, delayMs: step.delayMs });
      if (!(await control.pause(step.delayMs))) return 'abandoned';
    }
  }
  return 'abandoned';
}
