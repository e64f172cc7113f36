/**
 * A record's whole path through the runtime, read top-down: one partition's batch is taken step
 * by step (`nextStep` in partition-state.ts chooses), each step applied and committed; this file
 * is where retry, isolation and dead-lettering branch off.
 *
 *   processBatch        step by step through the batch, from the partition's state
 *     processGroup      a group from the first record not done: counted durably first while the
 *                       partition may be a redelivery (before decoding, so a crash while decoding
 *                       is counted too), decoded, applied in one transaction, committed. A count
 *                       left by an earlier try that never came back, poison, or a dead-letter
 *                       deadline isolates it
 *     processAlone      one record: counted durably first, poison counts toward the delivery limit
 *                       (so a crash loop ends too), an infrastructure failure retries until the
 *                       deadline
 *     deadLetter        the record goes to the dead letter topic, then the partition moves on
 *     holdPartition     a retry is due: the partition is paused and resumed by a timer, its facts
 *                       kept in its state; this batch returns at once, the other partitions flow
 *
 * Any step may find the batch abandoned (stop, rebalance, failed commit or heartbeat): it
 * returns at once, uncommitted, and the records are delivered again (the inbox makes that safe).
 * Offsets are committed only through records done, so a held record is fetched again.
 */
import { errorMessage } from '../../lib/errors.js';
import { retryDelay } from '../../lib/wait.js';
import { type EffectsOutcome, applyEffects } from './apply-effects.js';
import { decodeCloudEvent } from './cloud-event.js';
import type { PartitionControl, ProcessingContext } from './context.js';
import { sendToDeadLetterTopic } from './dead-letter.js';
import { startEventSpans } from './event-spans.js';
import {
  type AttemptCount,
  type AttemptKey,
  clearAttempts,
  countAttempt,
  recordPoison,
  uncountAttempt,
} from './delivery-attempts.js';
import { type Delivery, latenessOf, recordIds } from './delivery.js';
import { type Failure, classifyFailure } from './failures.js';
import { headerValue } from './headers.js';
import {
  type DeadLetterFacts,
  type Hold,
  type PartitionState,
  type Step,
  afterGroupFailure,
  afterRecordFailure,
  countStands,
  crashedBefore,
  nextStep,
} from './partition-state.js';
import type { SourceRecord } from './types.js';

/** `held`: a retry wait is due and the partition is paused; the batch ends here. */
type Outcome = 'done' | 'held' | 'abandoned';

/** Processes the batch's records in offset order; returns early (uncommitted) when the partition is held or the batch abandoned. */
export async function processBatch(
  ctx: ProcessingContext,
  control: PartitionControl,
  records: readonly SourceRecord[],
): Promise<void> {
  await ctx.partitions.released(); // counts taken back at the last join are settled before new ones
  const state = ctx.partitions.of(control.topic, control.partition);
  const first = records[0];
  // A hold on a record no longer there (retention removed it) has nothing left to retry.
  if (first !== undefined && state.hold !== undefined && BigInt(state.hold.offset) < BigInt(first.offset))
    await releaseHold(ctx, state);
  let index = 0;
  while (index < records.length && control.active()) {
    const record = records[index] as SourceRecord;
    const step = nextStep(state, record.offset);
    let outcome: Outcome;
    let advance = 1;
    if (step.kind === 'dead-letter')
      outcome = await deadLetter(ctx, control, state, record, step.hold.deadLetter, step.hold);
    else if (step.kind === 'alone') outcome = await processAlone(ctx, control, state, record, step);
    else ({ outcome, advance } = await processGroup(ctx, control, state, records, index, step));
    if (outcome !== 'done') return;
    index += advance;
    if (!(await control.heartbeat())) return;
  }
}

/**
 * Takes back what a dropped state leaves open: a counted attempt of a held unit (it did not run to
 * its end, and not for the record's reasons), and the partition reported free again.
 */
export async function releaseHold(ctx: ProcessingContext, state: PartitionState): Promise<void> {
  const hold = state.hold;
  state.hold = undefined;
  if (hold === undefined) return;
  if (hold.counted && hold.unit !== 'dead-letter') {
    const key = attemptKey(ctx, { topic: state.topic, partition: state.partition, offset: hold.offset }, hold.unit);
    await bestEffort(ctx, () => uncountAttempt(ctx.pool, key));
  }
  ctx.events.emit('recovered', { topic: state.topic, partition: state.partition });
}

// ── a group ───────────────────────────────────────────────────────────────────────────────────

/** Transactional effects: every decodable record from here is one group. External effects: groups of a bounded size. */
function groupLimit(ctx: ProcessingContext): number {
  const { effects } = ctx.definition;
  return effects.kind === 'external' ? Math.max(1, effects.maxGroupSize ?? 32) : Infinity;
}

/** Decodes up to `limit` records from `from`; stops before the first that does not decode. */
async function decodeRun(
  ctx: ProcessingContext,
  records: readonly SourceRecord[],
  from: number,
  limit: number,
): Promise<Delivery[]> {
  const deliveries: Delivery[] = [];
  for (const record of records.slice(from, from + limit)) {
    try {
      deliveries.push({
        record,
        event: await decodeCloudEvent(ctx.registry, record, ctx.definition.eventTypes, ctx.decodeLimits),
      });
    } catch {
      break;
    }
  }
  return deliveries;
}

/** From here on, records through `throughOffset` are processed one at a time. */
function isolate(
  state: PartitionState,
  throughOffset: string,
  failingSinceMs: number | undefined,
): { outcome: Outcome; advance: number } {
  state.hold = undefined;
  state.alone = { throughOffset, failingSinceMs };
  return { outcome: 'done', advance: 0 };
}

async function processGroup(
  ctx: ProcessingContext,
  control: PartitionControl,
  state: PartitionState,
  records: readonly SourceRecord[],
  index: number,
  step: Step & { kind: 'group' },
): Promise<{ outcome: Outcome; advance: number }> {
  const first = records[index] as SourceRecord;
  const { hold } = step;
  const limit = groupLimit(ctx);
  let counted = hold?.counted ?? false;
  let deliveries: Delivery[] = [];
  try {
    if (step.count) {
      const count = await countAttempt(ctx.pool, attemptKey(ctx, first, 'group'));
      counted = true;
      state.counted = true;
      // The culprit is unknown (it may not even decode): each record of what the group can be, alone.
      if (crashedBefore(count))
        return isolate(
          state,
          (records[Math.min(records.length, index + limit) - 1] as SourceRecord).offset,
          hold?.failingSinceMs,
        );
    }
    deliveries = await decodeRun(ctx, records, index, limit);
    // Not decodable now: poison, or the registry is away. Alone, it finds out which.
    if (deliveries.length === 0) return isolate(state, first.offset, hold?.failingSinceMs);
    if (!(await applyAndCommit(ctx, control, state, deliveries))) return { outcome: 'abandoned', advance: 0 };
    finish(ctx, state, first.offset, hold?.failingSinceMs);
    return { outcome: 'done', advance: deliveries.length };
  } catch (err) {
    const failure = classifyFailure(err);
    const failingSinceMs = hold?.failingSinceMs ?? Date.now();
    const held = deliveries.length > 0 ? deliveries.map((d) => d.record) : records.slice(index, index + limit);
    const late =
      failure.kind === 'infrastructure' ? reportFailing(ctx, control, held, failure, failingSinceMs) : undefined;
    const attempt = hold?.attempt ?? 0;
    const next = afterGroupFailure(failure, late, attempt);
    if (next.kind !== 'retry') return isolate(state, (held.at(-1) ?? first).offset, failingSinceMs); // each record meets its own fate
    // The try came back, failed by the infrastructure: not one the process died in. Its count goes.
    if (counted && (await takeBackCount(ctx, attemptKey(ctx, first, 'group')))) counted = false;
    const delayMs = retryWait(ctx, next.backoffAttempt, next.maxDelayMs);
    logRetry(ctx, control, { size: held.length }, failure, attempt + 1, delayMs);
    const outcome = await holdPartition(
      ctx,
      control,
      state,
      { offset: first.offset, unit: 'group', failingSinceMs, attempt: attempt + 1, counted },
      delayMs,
    );
    return { outcome, advance: 0 };
  }
}

/** Applies the deliveries' effects (forgetting the partition's counts with them) and commits their offsets. */
async function applyAndCommit(
  ctx: ProcessingContext,
  control: PartitionControl,
  state: PartitionState,
  deliveries: readonly Delivery[],
): Promise<boolean> {
  const last = deliveries.at(-1);
  if (last === undefined) return true;
  const where = { topic: control.topic, partition: control.partition };
  const clear = state.counted ? { throughOffset: last.record.offset } : undefined;
  const events = deliveries.flatMap((d) => (d.event === undefined ? [] : [d.event]));
  const spans = startEventSpans(ctx, control, events);
  let outcome: EffectsOutcome;
  try {
    outcome = await applyEffects(ctx, control, events, clear);
  } catch (err) {
    spans.end(undefined, err);
    throw err;
  }
  for (const event of outcome.applied) {
    ctx.events.emit('applied', { ...where, type: event.type, count: 1 });
    ctx.events.emit('eventHandled', { ...where, ageMs: Date.now() - event.timeMs });
  }
  if (outcome.duplicates > 0) ctx.events.emit('duplicate', { ...where, count: outcome.duplicates });
  for (const d of deliveries)
    if (d.event === undefined)
      ctx.events.emit('skipped', { ...where, type: headerValue(d.record.headers, 'ce_type') ?? '' });
  const done = await committed(ctx, control, state, last.record.offset, clear !== undefined);
  spans.end(
    outcome.applied,
    done ? undefined : new Error('the offsets were not committed (the batch was abandoned); the events come again'),
  );
  return done;
}

/** Commits past a dead-lettered record, forgetting the partition's counts first (best effort). */
async function commitPast(
  ctx: ProcessingContext,
  control: PartitionControl,
  state: PartitionState,
  offset: string,
): Promise<boolean> {
  const counted = state.counted;
  if (counted)
    await bestEffort(ctx, () => clearAttempts(ctx.pool, ctx.definition.name, control.topic, control.partition, offset));
  return committed(ctx, control, state, offset, counted);
}

async function committed(
  ctx: ProcessingContext,
  control: PartitionControl,
  state: PartitionState,
  offset: string,
  countsCleared: boolean,
): Promise<boolean> {
  if (!(await control.commitThrough(offset))) return false;
  if (countsCleared) state.counted = false;
  state.committed = true;
  if (state.alone !== undefined && BigInt(offset) >= BigInt(state.alone.throughOffset)) state.alone = undefined;
  return true;
}

// ── one record alone ──────────────────────────────────────────────────────────────────────────

/**
 * Decodes and applies `record` alone until it is applied, skipped or dead-lettered, the partition
 * held, or the batch abandoned. Every attempt is counted durably before it starts, and an attempt
 * that the infrastructure failed takes its count back (that failure was not the record's, and the
 * process did not die in it): so the count is poison failures plus attempts the process died in.
 */
async function processAlone(
  ctx: ProcessingContext,
  control: PartitionControl,
  state: PartitionState,
  record: SourceRecord,
  step: Step & { kind: 'alone' },
): Promise<Outcome> {
  const key = attemptKey(ctx, record, 'record');
  const { hold } = step;
  const attempt = hold?.attempt ?? 0;
  let counted = hold?.counted ?? false;
  let attempts = hold?.attempts;
  try {
    if (!counted) {
      const count = await countAttempt(ctx.pool, key);
      counted = true;
      attempts = count.attempts;
      state.counted = true;
      if (count.attempts > ctx.policy.deliveryLimit)
        return await deadLetter(
          ctx,
          control,
          state,
          record,
          crashedFacts(count, ctx.policy.deliveryLimit),
          hold,
          step.failingSinceMs,
        );
    }
    const event = await decodeCloudEvent(ctx.registry, record, ctx.definition.eventTypes, ctx.decodeLimits);
    if (!(await applyAndCommit(ctx, control, state, [{ record, event }]))) return 'abandoned';
    finish(ctx, state, record.offset, step.failingSinceMs);
    return 'done';
  } catch (err) {
    const failure = classifyFailure(err);
    const failingSinceMs = step.failingSinceMs ?? Date.now();
    if (failure.kind === 'poison' && counted)
      await bestEffort(ctx, () => recordPoison(ctx.pool, key, failure.reason, failure.message));
    const late =
      failure.kind === 'infrastructure' ? reportFailing(ctx, control, [record], failure, failingSinceMs) : undefined;
    const next = afterRecordFailure({
      failure,
      late,
      attempt,
      attempts: attempts ?? 1,
      deliveryLimit: ctx.policy.deliveryLimit,
    });
    if (next.kind === 'dead-letter')
      return deadLetter(
        ctx,
        control,
        state,
        record,
        { reason: next.reason, error: failure.message, attempts: next.attempts },
        hold,
        failingSinceMs,
      );
    if (failure.kind === 'infrastructure' && counted && (await takeBackCount(ctx, key))) counted = false;
    const delayMs = retryWait(ctx, next.backoffAttempt, next.maxDelayMs);
    logRetry(ctx, control, recordIds(record, ctx.definition.name), failure, attempt + 1, delayMs);
    const counts = { counted: countStands(counted, next), ...(attempts === undefined ? {} : { attempts }) };
    return holdPartition(
      ctx,
      control,
      state,
      { offset: record.offset, unit: 'record', failingSinceMs, attempt: attempt + 1, ...counts },
      delayMs,
    );
  }
}

/** A count past the limit with no poison recorded: the process died during every one of them. */
function crashedFacts(count: AttemptCount, limit: number): DeadLetterFacts {
  return {
    reason: count.lastReason ?? 'crashed the consumer',
    error: count.lastError ?? `the consumer process ended during each of ${limit} attempts to apply this record`,
    attempts: count.attempts - 1,
  };
}

// ── dead letters ──────────────────────────────────────────────────────────────────────────────

/** Sends the record to the dead letter topic (held and tried again while Kafka refuses), then commits past it. */
async function deadLetter(
  ctx: ProcessingContext,
  control: PartitionControl,
  state: PartitionState,
  record: SourceRecord,
  facts: DeadLetterFacts,
  hold: Hold | undefined,
  failingSinceMs = hold?.failingSinceMs,
): Promise<Outcome> {
  if (!control.active()) return 'abandoned';
  const consumer = ctx.definition.name;
  const firstFailureMs = failingSinceMs ?? Date.now();
  try {
    await sendToDeadLetterTopic(ctx.producer, record, { ...facts, firstFailureAt: new Date(firstFailureMs), consumer });
  } catch (err) {
    const attempt = hold?.unit === 'dead-letter' ? hold.attempt : 0;
    const delayMs = retryWait(ctx, attempt, Infinity);
    ctx.logger.warn(
      { ...recordIds(record, consumer), error: errorMessage(err), delayMs },
      'the dead letter topic did not take the record; retrying',
    );
    return holdPartition(
      ctx,
      control,
      state,
      {
        offset: record.offset,
        unit: 'dead-letter',
        failingSinceMs: firstFailureMs,
        attempt: attempt + 1,
        counted: false,
        deadLetter: facts,
      },
      delayMs,
    );
  }
  ctx.logger.error(
    { ...recordIds(record, consumer), reason: facts.reason, error: facts.error, attempts: facts.attempts },
    `dead-lettered: ${facts.reason}`,
  );
  ctx.events.emit('deadLettered', { topic: record.topic, partition: record.partition, reason: facts.reason });
  if (!(await commitPast(ctx, control, state, record.offset))) return 'abandoned';
  finish(ctx, state, record.offset, failingSinceMs);
  return 'done';
}

// ── shared steps ──────────────────────────────────────────────────────────────────────────────

function attemptKey(
  ctx: ProcessingContext,
  at: { topic: string; partition: number; offset: string },
  unit: 'group' | 'record',
): AttemptKey {
  return { consumer: ctx.definition.name, topic: at.topic, partition: at.partition, offset: at.offset, scope: unit };
}

/** A unit is done (applied, skipped or dead-lettered): its hold goes, and a partition held by a failure is reported free again. */
function finish(
  ctx: ProcessingContext,
  state: PartitionState,
  offset: string,
  failingSinceMs: number | undefined,
): void {
  if (state.hold?.offset === offset) state.hold = undefined;
  if (failingSinceMs !== undefined) ctx.events.emit('recovered', { topic: state.topic, partition: state.partition });
}

/**
 * Keeps the hold in the partition's state, pauses the partition and has it resumed after
 * `delayMs`; the batch returns without resolving the held records, so they are fetched again.
 * A batch that is no longer active (stop, revocation) takes its counted attempt back instead.
 */
async function holdPartition(
  ctx: ProcessingContext,
  control: PartitionControl,
  state: PartitionState,
  hold: Hold,
  delayMs: number,
): Promise<Outcome> {
  state.hold = hold;
  if (control.active() && ctx.partitions.holdFor(state, control.pause, delayMs)) return 'held';
  await releaseHold(ctx, state);
  return 'abandoned';
}

/** Emits `failing` (the alert's source) and says how late the held events are. */
function reportFailing(
  ctx: ProcessingContext,
  control: PartitionControl,
  records: readonly SourceRecord[],
  failure: Failure & { kind: 'infrastructure' },
  failingSinceMs: number,
) {
  const late = latenessOf(ctx.definition, ctx.policy, records, failingSinceMs);
  ctx.events.emit('failing', {
    topic: control.topic,
    partition: control.partition,
    code: failure.code,
    error: failure.message,
    oldestEventAgeMs: late.oldestAgeMs,
    pastDeadline: late.pastDeadline,
  });
  return late;
}

/** Capped, fully jittered backoff that never sleeps past the next deadline decision. */
function retryWait(ctx: ProcessingContext, attempt: number, msUntilNextChange: number): number {
  const delay = retryDelay({ attempt, baseMs: ctx.policy.retryBaseMs, capMs: ctx.policy.retryCapMs });
  return Math.max(0, Math.min(delay, msUntilNextChange + 10));
}

function logRetry(
  ctx: ProcessingContext,
  control: PartitionControl,
  ids: Record<string, unknown>,
  failure: Failure,
  attempt: number,
  delayMs: number,
): void {
  const detail = failure.kind === 'poison' ? { reason: failure.reason } : { code: failure.code };
  ctx.logger.warn(
    {
      consumer: ctx.definition.name,
      topic: control.topic,
      partition: control.partition,
      ...ids,
      kind: failure.kind,
      ...detail,
      error: failure.message,
      attempt,
      delayMs,
    },
    failure.kind === 'poison'
      ? 'the record failed as poison; retrying it up to the delivery limit'
      : 'the infrastructure failed; retrying, the partition held in order',
  );
  ctx.events.emit('retry', {
    topic: control.topic,
    partition: control.partition,
    kind: failure.kind,
    attempt,
    delayMs,
  });
}

/**
 * Takes back the count of a try that came back failed by the infrastructure, so a process killed
 * while the partition waits leaves nothing against the record; false (the count stands, as if the
 * try had not come back) when the consumer database refuses.
 */
async function takeBackCount(ctx: ProcessingContext, key: AttemptKey): Promise<boolean> {
  try {
    await uncountAttempt(ctx.pool, key);
    return true;
  } catch (err) {
    ctx.logger.warn(
      { consumer: ctx.definition.name, error: errorMessage(err) },
      'could not take back a delivery attempt count',
    );
    return false;
  }
}

/** Bookkeeping that must not turn one failure into another: logged, never thrown. */
async function bestEffort(ctx: ProcessingContext, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (err) {
    ctx.logger.warn(
      { consumer: ctx.definition.name, error: errorMessage(err) },
      'could not update a delivery attempt count',
    );
  }
}
