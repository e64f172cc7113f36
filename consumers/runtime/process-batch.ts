/**
 * A record's whole path through the runtime, read top-down: one partition's batch is taken step
 * by step (`nextStep` in partition-state.ts chooses), each step applied and committed; this file
 * is where retry, isolation and dead-lettering branch off.
 *
 *   processBatch        step by step through the batch, from the partition's state; each step is
 *                       one unit: a group, a record alone, or a record's dead letter
 *     groupUnit         a group from the first record not done, decoded and applied in one
 *                       transaction, committed; counted durably first while the partition may be a
 *                       redelivery (before decoding, so a crash while decoding is counted too)
 *     recordUnit        one record alone, counted durably first: poison counts toward the delivery
 *                       limit (so a crash loop ends too)
 *     deadLetterUnit    the record goes to the dead letter topic, then the partition moves on
 *     tryUnit           the one retry loop every unit goes through: count, try, classify the
 *                       failure, and do what `decide` (decision.ts) says: apply, wait, isolate,
 *                       dead-letter or abandon
 *     holdPartition     a wait is due: the partition is paused and resumed by a timer, its facts
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
import { deadLetterExpired, sendToDeadLetterTopic } from './dead-letter.js';
import { startEventSpans } from './event-spans.js';
import { type Decision, type DecisionInput, type Outcome as TryOutcome, type Unit, decide } from './decision.js';
import { type AttemptCount, type AttemptKey, clearAttempts } from './delivery-attempts.js';
import { type Delivery, deadlineStartMs, latenessOf, recordIds } from './delivery.js';
import { type Failure, classifyFailure } from './failures.js';
import { headerValue } from './headers.js';
import {
  type DeadLetterFacts,
  type Hold,
  type PartitionState,
  type Step,
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
    reportWaiting(ctx, control, record);
    const step = nextStep(state, record.offset);
    const work =
      step.kind === 'dead-letter'
        ? deadLetterUnit(ctx, control, state, record, step.hold.deadLetter, step.hold, step.hold.failingSinceMs)
        : step.kind === 'alone'
          ? recordUnit(ctx, control, state, record, step.hold, step.failingSinceMs)
          : groupUnit(ctx, control, state, records, index, step);
    const { outcome, advance } = await tryUnit(ctx, control, state, work);
    if (outcome !== 'done') return;
    index += advance;
    if (!(await control.heartbeat())) return;
  }
  if (index >= records.length) reportWaiting(ctx, control, undefined);
}

/** The oldest event of the partition not yet handled (the batch's first not done), or none: the backlog alert's source. */
function reportWaiting(ctx: ProcessingContext, control: PartitionControl, record: SourceRecord | undefined): void {
  ctx.events.emit('waiting', {
    topic: control.topic,
    partition: control.partition,
    sinceMs: record === undefined ? undefined : deadlineStartMs(record),
  });
}

/**
 * What a dropped state leaves open: the partition, held by a failure, reported free again. (A held
 * unit's try has finished already: nothing counts against its record.)
 */
export function releaseHold(ctx: ProcessingContext, state: PartitionState): Promise<void> {
  const hold = state.hold;
  state.hold = undefined;
  if (hold !== undefined) ctx.events.emit('recovered', { topic: state.topic, partition: state.partition });
  return Promise.resolve();
}

// ── the one retry loop ────────────────────────────────────────────────────────────────────────

/** What a try of a unit came back with: the records it moved past, or why it did not. */
type TryResult = { advance: number } | 'abandoned' | 'not-decodable';

/** One unit of work as the retry loop sees it; a group, a record alone and a dead letter differ only in these parts. */
interface UnitWork {
  unit: Unit;
  /** The unit's first record: where the partition is held. */
  first: SourceRecord;
  hold: Hold | undefined;
  /** Since when the unit (or the group it was isolated from) has been failing. */
  failingSinceMs: number | undefined;
  /** Where its durable count is kept, and whether this try is counted before it starts. */
  count?: { key: AttemptKey; now: boolean };
  run(): Promise<TryResult>;
  /** The records whose lateness a failure holds. */
  held(): readonly SourceRecord[];
  /** Isolating: records through this offset are processed one at a time. */
  isolateThrough(): string;
  /** Tells on-call about the wait (the retry log line). */
  logWait(failure: Failure, attempt: number, delayMs: number): void;
}

/**
 * Counts, tries, and on every outcome does what `decide` says. A counted try that comes back, in
 * any way but applied, is finished (delivery-attempts.ts): the count against a record is its
 * poison failures plus the tries the process died in.
 */
async function tryUnit(
  ctx: ProcessingContext,
  control: PartitionControl,
  state: PartitionState,
  work: UnitWork,
): Promise<{ outcome: Outcome; advance: number }> {
  const facts: TryFacts = {
    failingSinceMs: work.failingSinceMs,
    attempt: work.hold?.attempt ?? 0,
    attempts: work.hold?.attempts ?? 1,
  };
  const decideOn = (outcome: TryOutcome, late?: DecisionInput['late']) =>
    decide({
      unit: work.unit,
      outcome,
      late,
      attempt: facts.attempt,
      attempts: facts.attempts,
      deliveryLimit: ctx.policy.deliveryLimit,
    });
  try {
    if (work.count?.now === true) {
      const count = await ctx.attempts.start(work.count.key);
      Object.assign(facts, { attempts: count.attempts, count, running: count.tryNumber });
      state.counted = true;
      const unfinishedBefore = work.unit === 'group' ? crashedBefore(count) : count.unfinishedBefore > 0;
      const decision = decideOn({ kind: 'counted', unfinishedBefore, lastReason: count.lastReason });
      if (decision.kind !== 'apply') return await followDecision(ctx, control, state, work, decision, facts);
    }
    const result = await work.run();
    if (typeof result === 'string') {
      await finishTry(ctx, work, facts);
      return await followDecision(ctx, control, state, work, decideOn({ kind: result }), facts);
    }
    finish(ctx, state, work.first.offset, work.failingSinceMs);
    return { outcome: 'done', advance: result.advance };
  } catch (err) {
    const failure = classifyFailure(err);
    facts.failure = failure;
    facts.failingSinceMs ??= Date.now();
    await finishTry(ctx, work, facts, failure.kind === 'poison' ? failure : undefined);
    const late =
      failure.kind !== 'poison' && work.unit !== 'dead-letter'
        ? reportFailing(ctx, control, work.held(), failure, facts.failingSinceMs)
        : undefined;
    return followDecision(ctx, control, state, work, decideOn({ kind: 'failed', failure }, late), facts);
  }
}

interface TryFacts {
  failure?: Failure;
  failingSinceMs: number | undefined;
  attempt: number;
  attempts: number;
  /** The try's durable count, when it was counted. */
  count?: AttemptCount;
  /** The number of the counted try while it has not finished. */
  running?: number;
}

/**
 * The counted try came back: it is finished, with its poison failure when that is how it came
 * back. A finish the consumer database refuses is written with the next count (a warning says so).
 */
async function finishTry(
  ctx: ProcessingContext,
  work: UnitWork,
  facts: TryFacts,
  poison?: Failure & { kind: 'poison' },
): Promise<void> {
  const { running } = facts;
  if (running === undefined || work.count === undefined) return;
  facts.running = undefined;
  const finish = {
    key: work.count.key,
    tryNumber: running,
    ...(poison === undefined ? {} : { poison: { reason: poison.reason, error: poison.message } }),
  };
  if (!(await ctx.attempts.finish(finish)))
    ctx.logger.warn(
      { consumer: ctx.definition.name, topic: work.count.key.topic, partition: work.count.key.partition },
      'could not record that a delivery attempt came back; it is recorded with the next count',
    );
}

async function followDecision(
  ctx: ProcessingContext,
  control: PartitionControl,
  state: PartitionState,
  work: UnitWork,
  decision: Decision,
  facts: TryFacts,
): Promise<{ outcome: Outcome; advance: number }> {
  const { failure, failingSinceMs } = facts;
  switch (decision.kind) {
    case 'apply':
      return { outcome: 'done', advance: 0 };
    case 'abandon':
      return { outcome: 'abandoned', advance: 0 };
    case 'isolate':
      state.hold = undefined;
      state.alone = { throughOffset: work.isolateThrough(), failingSinceMs };
      return { outcome: 'done', advance: 0 };
    case 'dead-letter': {
      const error =
        failure?.message ??
        facts.count?.lastError ??
        `the consumer process ended during each of ${ctx.policy.deliveryLimit} attempts to apply this record`;
      const letter = { reason: decision.reason, error, attempts: decision.attempts };
      return tryUnit(
        ctx,
        control,
        state,
        deadLetterUnit(ctx, control, state, work.first, letter, work.hold, failingSinceMs),
      );
    }
    case 'wait': {
      const delayMs = retryWait(ctx, decision.backoffAttempt, decision.maxDelayMs, failure);
      if (failure !== undefined) work.logWait(failure, facts.attempt + 1, delayMs);
      const hold: Hold = {
        offset: work.first.offset,
        unit: work.unit,
        failingSinceMs: failingSinceMs ?? Date.now(),
        attempt: facts.attempt + 1,
        ...(work.unit === 'record' ? { attempts: facts.attempts } : {}),
        ...(work.hold?.deadLetter === undefined ? {} : { deadLetter: work.hold.deadLetter }),
      };
      return { outcome: await holdPartition(ctx, control, state, hold, delayMs), advance: 0 };
    }
  }
}

// ── the three units ───────────────────────────────────────────────────────────────────────────

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

/** A group from `records[index]`: decoded up to the first record that does not decode, applied in one go. */
function groupUnit(
  ctx: ProcessingContext,
  control: PartitionControl,
  state: PartitionState,
  records: readonly SourceRecord[],
  index: number,
  step: Step & { kind: 'group' },
): UnitWork {
  const first = records[index] as SourceRecord;
  const whole = records.slice(index, index + groupLimit(ctx));
  let deliveries: Delivery[] = [];
  let decodedNone = false;
  const held = () => (deliveries.length > 0 ? deliveries.map((d) => d.record) : whole);
  return {
    unit: 'group',
    first,
    hold: step.hold,
    failingSinceMs: step.hold?.failingSinceMs,
    count: { key: attemptKey(ctx, first, 'group'), now: step.count },
    async run() {
      deliveries = await decodeRun(ctx, records, index, whole.length);
      decodedNone = deliveries.length === 0;
      if (decodedNone) return 'not-decodable';
      return (await applyAndCommit(ctx, control, state, deliveries)) ? { advance: deliveries.length } : 'abandoned';
    },
    held,
    // Not decodable: its first record alone. Otherwise what was tried, or (a crash before: the
    // culprit may not even decode) each record the group can hold.
    isolateThrough: () => (decodedNone ? first : (held().at(-1) ?? first)).offset,
    logWait: (failure, attempt, delayMs) => logRetry(ctx, control, { size: held().length }, failure, attempt, delayMs),
  };
}

/** One record alone; every try is counted durably before it starts. */
function recordUnit(
  ctx: ProcessingContext,
  control: PartitionControl,
  state: PartitionState,
  record: SourceRecord,
  hold: Hold | undefined,
  failingSinceMs: number | undefined,
): UnitWork {
  return {
    unit: 'record',
    first: record,
    hold,
    failingSinceMs,
    count: { key: attemptKey(ctx, record, 'record'), now: true },
    async run() {
      const event = await decodeCloudEvent(ctx.registry, record, ctx.definition.eventTypes, ctx.decodeLimits);
      return (await applyAndCommit(ctx, control, state, [{ record, event }])) ? { advance: 1 } : 'abandoned';
    },
    held: () => [record],
    isolateThrough: () => record.offset,
    logWait: (failure, attempt, delayMs) =>
      logRetry(ctx, control, recordIds(record, ctx.definition.name), failure, attempt, delayMs),
  };
}

/** Sends the record to the dead letter topic (held and sent again while Kafka refuses), then commits past it. */
function deadLetterUnit(
  ctx: ProcessingContext,
  control: PartitionControl,
  state: PartitionState,
  record: SourceRecord,
  facts: DeadLetterFacts,
  hold: Hold | undefined,
  failingSinceMs: number | undefined,
): UnitWork {
  const consumer = ctx.definition.name;
  const firstFailureMs = failingSinceMs ?? Date.now();
  const sameLetter = hold?.unit === 'dead-letter' ? hold : undefined;
  return {
    unit: 'dead-letter',
    first: record,
    hold: {
      ...(sameLetter ?? { offset: record.offset, unit: 'dead-letter', attempt: 0 }),
      failingSinceMs: firstFailureMs,
      deadLetter: facts,
    },
    failingSinceMs,
    async run() {
      if (!control.active()) return 'abandoned';
      await sendToDeadLetterTopic(ctx.producer, record, {
        ...facts,
        firstFailureAt: new Date(firstFailureMs),
        consumer,
      });
      ctx.logger.error(
        { ...recordIds(record, consumer), reason: facts.reason, error: facts.error, attempts: facts.attempts },
        `dead-lettered: ${facts.reason}`,
      );
      ctx.events.emit('deadLettered', { topic: record.topic, partition: record.partition, reason: facts.reason });
      return (await commitPast(ctx, control, state, record.offset)) ? { advance: 1 } : 'abandoned';
    },
    held: () => [record],
    isolateThrough: () => record.offset,
    logWait: (failure, _attempt, delayMs) =>
      ctx.logger.warn(
        { ...recordIds(record, consumer), error: failure.message, delayMs },
        'the dead letter topic did not take the record; retrying',
      ),
  };
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
    await deadLetterExpired(ctx, control.topic, outcome.expired);
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

/** Emits `failing` (the alerts' source) and says how late the held events are. */
function reportFailing(
  ctx: ProcessingContext,
  control: PartitionControl,
  records: readonly SourceRecord[],
  failure: Failure & { kind: 'infrastructure' | 'handler-bug' },
  failingSinceMs: number,
) {
  const late = latenessOf(ctx.definition, ctx.policy, records, failingSinceMs);
  ctx.events.emit('failing', {
    topic: control.topic,
    partition: control.partition,
    kind: failure.kind,
    code: failure.code,
    error: failure.message,
    oldestEventAgeMs: late.oldestAgeMs,
    pastDeadline: late.pastDeadline,
  });
  return late;
}

/** The most a failure that says when to try again waits beyond that, however long it lasts. */
const HINTED_BACKOFF_CAP_MS = 5_000;

/**
 * Capped, fully jittered backoff that never sleeps past the next deadline decision. A failure
 * that says when to try again (a provider's "slow down", with the pace it set) waits at least that,
 * and at most a short backoff more (5 s), not the growing one: a throttle that lasts a minute must
 * not leave the partition waiting a minute more after it ends.
 */
function retryWait(ctx: ProcessingContext, attempt: number, msUntilNextChange: number, failure?: Failure): number {
  const hint = failure?.kind === 'infrastructure' ? failure.retryAfterMs : undefined;
  const capMs = hint === undefined ? ctx.policy.retryCapMs : Math.min(ctx.policy.retryCapMs, HINTED_BACKOFF_CAP_MS);
  const delay = Math.max(hint ?? 0, retryDelay({ attempt, baseMs: ctx.policy.retryBaseMs, capMs }));
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
  const where = { consumer: ctx.definition.name, topic: control.topic, partition: control.partition, ...ids };
  const retry = { attempt, delayMs };
  if (failure.kind === 'handler-bug')
    ctx.logger.error(
      { ...where, kind: failure.kind, code: failure.code, error: failure.message, stack: failure.stack, ...retry },
      `a bug in consumer ${ctx.definition.name} (${failure.code}) holds the partition; retrying until the event's deadline`,
    );
  else
    ctx.logger.warn(
      {
        ...where,
        kind: failure.kind,
        ...(failure.kind === 'poison' ? { reason: failure.reason } : { code: failure.code }),
        error: failure.message,
        ...retry,
      },
      failure.kind === 'poison'
        ? 'the record failed as poison; retrying it up to the delivery limit'
        : 'the infrastructure failed; retrying, the partition held in order',
    );
  ctx.events.emit('retry', { topic: control.topic, partition: control.partition, kind: failure.kind, ...retry });
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
