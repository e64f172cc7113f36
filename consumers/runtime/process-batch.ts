/**
 * A record's whole path through the runtime, read top-down: one partition's batch is decoded,
 * applied group by group, and committed; this file is where retry, isolation and dead-lettering
 * branch off.
 *
 *   processBatch        decode a run of records → apply it as groups → commit each → heartbeat
 *     applyGroup        one transaction for a group; an infrastructure failure retries the same
 *                       group until its events' deadlines; poison, a crash on an earlier try, or a
 *                       dead-letter deadline isolates the group
 *     processAlone      one record: poison counts toward the delivery limit (durably, so a crash
 *                       loop ends too), an infrastructure failure retries until the deadline
 *     deadLetter        the record goes to the dead letter topic, then the partition moves on
 *
 * Any step may find the batch abandoned (stop, rebalance, failed commit or heartbeat): it
 * returns at once, uncommitted, and the records are delivered again (the inbox makes that safe).
 */
import { errorMessage } from '../../lib/errors.js';
import { retryDelay } from '../../lib/wait.js';
import { type EffectsOutcome, applyEffects } from './apply-effects.js';
import { decodeCloudEvent } from './cloud-event.js';
import { type PartitionControl, type ProcessingContext, partitionKey } from './context.js';
import { sendToDeadLetterTopic } from './dead-letter.js';
import { startEventSpans } from './event-spans.js';
import { type AttemptCount, type AttemptKey, clearAttempts, countAttempt, recordPoison, uncountAttempt } from './delivery-attempts.js';
import { type Delivery, latenessOf, recordIds } from './delivery.js';
import { type DeadLetterReason, type Failure, classifyFailure } from './failures.js';
import { headerValue } from './headers.js';
import type { SourceRecord } from './types.js';

type Outcome = 'done' | 'abandoned';

/** Processes the batch's records in offset order; returns early (uncommitted) when the batch is abandoned. */
export async function processBatch(ctx: ProcessingContext, control: PartitionControl, records: readonly SourceRecord[]): Promise<void> {
  let index = 0;
  while (index < records.length && control.active()) {
    const run = await decodeRun(ctx, records, index);
    for (const group of groupsOf(ctx, run.deliveries)) {
      const outcome = await applyGroup(ctx, control, group);
      if (outcome === 'abandoned') return;
      if (outcome === 'isolate') {
        for (const { record } of group.deliveries) {
          if ((await processAlone(ctx, control, record, group.failingSinceMs)) === 'abandoned') return;
        }
      }
      if (!(await control.heartbeat())) return;
    }
    index += run.deliveries.length;
    const undecoded = records[index];
    if (run.stoppedAtFailure && undecoded !== undefined) {
      // Not decodable now: poison, or the registry is away. Alone, it finds out which.
      if ((await processAlone(ctx, control, undecoded)) === 'abandoned') return;
      index += 1;
    }
  }
}

// ── decode ────────────────────────────────────────────────────────────────────────────────────

interface DecodedRun {
  deliveries: Delivery[];
  /** True when the run stopped at a record that does not decode. */
  stoppedAtFailure: boolean;
}

async function decodeRun(ctx: ProcessingContext, records: readonly SourceRecord[], from: number): Promise<DecodedRun> {
  const deliveries: Delivery[] = [];
  for (const record of records.slice(from)) {
    try {
      deliveries.push({ record, event: await decodeCloudEvent(ctx.registry, record, ctx.definition.eventTypes, ctx.decodeLimits) });
    } catch {
      return { deliveries, stoppedAtFailure: true };
    }
  }
  return { deliveries, stoppedAtFailure: false };
}

/** A unit of work that may hold its partition: since when it has been failing, if it is. */
interface Held {
  failingSinceMs?: number;
}

interface Group extends Held {
  deliveries: Delivery[];
}

/** Transactional effects: the whole run is one group. External effects: groups of a bounded size. */
function groupsOf(ctx: ProcessingContext, deliveries: Delivery[]): Group[] {
  const { effects } = ctx.definition;
  const size = effects.kind === 'external' ? (effects.maxGroupSize ?? 32) : Math.max(1, deliveries.length);
  const groups: Group[] = [];
  for (let start = 0; start < deliveries.length; start += size) groups.push({ deliveries: deliveries.slice(start, start + size) });
  return groups;
}

// ── apply a group ─────────────────────────────────────────────────────────────────────────────

/**
 * The first group of a partition since this member joined may be a redelivery after a crash:
 * it is counted durably first, and a count left over from an earlier try (the process died
 * during it) isolates the group so the record at fault is found and counted on its own.
 */
async function applyGroup(ctx: ProcessingContext, control: PartitionControl, group: Group): Promise<Outcome | 'isolate'> {
  const first = group.deliveries[0]?.record;
  if (first === undefined) return 'done';
  const mayBeRedelivery = !ctx.committedSinceJoin.has(partitionKey(control.topic, control.partition));
  const key: AttemptKey = { consumer: ctx.definition.name, topic: control.topic, partition: control.partition, offset: first.offset, scope: 'group' };
  let counted = false;
  for (let attempt = 0; control.active(); attempt += 1) {
    try {
      if (mayBeRedelivery && !counted) {
        const count = await countAttempt(ctx.pool, key);
        counted = true;
        ctx.countedPartitions.add(partitionKey(control.topic, control.partition));
        // An earlier try of this group, or of its first record alone, never came back.
        if (count.attempts > 1 || count.headRecordAttempts > 0) return settle(ctx, control, group, 'isolate');
      }
      if (!(await applyAndCommit(ctx, control, group.deliveries))) return settle(ctx, control, group, 'abandoned');
      return settle(ctx, control, group, 'done');
    } catch (err) {
      const failure = classifyFailure(err);
      group.failingSinceMs ??= Date.now();
      if (failure.kind === 'poison') return settle(ctx, control, group, 'isolate');
      const late = reportFailing(ctx, control, group.deliveries.map((d) => d.record), failure, group.failingSinceMs);
      if (late.deadLetterNow) return settle(ctx, control, group, 'isolate'); // each record meets its own policy
      const delayMs = retryWait(ctx, attempt, late.msUntilNextChange);
      logRetry(ctx, control, { size: group.deliveries.length }, failure, attempt + 1, delayMs);
      if (!(await control.pause(delayMs))) {
        if (counted) await bestEffort(ctx, () => uncountAttempt(ctx.pool, key));
        return settle(ctx, control, group, 'abandoned');
      }
    }
  }
  return settle(ctx, control, group, 'abandoned');
}

/** Applies the deliveries' effects (forgetting the partition's counts with them) and commits their offsets. */
async function applyAndCommit(ctx: ProcessingContext, control: PartitionControl, deliveries: readonly Delivery[]): Promise<boolean> {
  const last = deliveries.at(-1);
  if (last === undefined) return true;
  const where = { topic: control.topic, partition: control.partition };
  const partition = partitionKey(control.topic, control.partition);
  const clear = ctx.countedPartitions.has(partition) ? { throughOffset: last.record.offset } : undefined;
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
  for (const d of deliveries) if (d.event === undefined) ctx.events.emit('skipped', { ...where, type: headerValue(d.record.headers, 'ce_type') ?? '' });
  const done = await committed(ctx, control, last.record.offset, clear !== undefined);
  spans.end(outcome.applied, done ? undefined : new Error('the offsets were not committed (the batch was abandoned); the events come again'));
  return done;
}

/** Commits past a dead-lettered record, forgetting the partition's counts first (best effort). */
async function commitPast(ctx: ProcessingContext, control: PartitionControl, offset: string): Promise<boolean> {
  const counted = ctx.countedPartitions.has(partitionKey(control.topic, control.partition));
  if (counted) await bestEffort(ctx, () => clearAttempts(ctx.pool, ctx.definition.name, control.topic, control.partition, offset));
  return committed(ctx, control, offset, counted);
}

async function committed(ctx: ProcessingContext, control: PartitionControl, offset: string, countsCleared: boolean): Promise<boolean> {
  if (!(await control.commitThrough(offset))) return false;
  const partition = partitionKey(control.topic, control.partition);
  if (countsCleared) ctx.countedPartitions.delete(partition);
  ctx.committedSinceJoin.add(partition);
  return true;
}

// ── one record alone ──────────────────────────────────────────────────────────────────────────

/**
 * Decodes and applies `record` alone until it is applied, skipped or dead-lettered, or the batch
 * is abandoned. Every attempt is counted durably before it starts, except one that follows an
 * infrastructure failure in this process (that failure was not the record's): so the count is
 * poison failures plus attempts during which the process died.
 */
async function processAlone(ctx: ProcessingContext, control: PartitionControl, record: SourceRecord, failingSinceMs?: number): Promise<Outcome> {
  const key: AttemptKey = { consumer: ctx.definition.name, topic: record.topic, partition: record.partition, offset: record.offset, scope: 'record' };
  const failing: Held = { failingSinceMs };
  let count: AttemptCount | undefined;
  let countNext = true;
  for (let attempt = 0; control.active(); attempt += 1) {
    try {
      if (countNext) {
        count = await countAttempt(ctx.pool, key);
        countNext = false;
        ctx.countedPartitions.add(partitionKey(record.topic, record.partition));
        if (count.attempts > ctx.policy.deliveryLimit) return deadLetter(ctx, control, record, crashedFacts(count, ctx.policy.deliveryLimit), failing);
      }
      const event = await decodeCloudEvent(ctx.registry, record, ctx.definition.eventTypes, ctx.decodeLimits);
      if (!(await applyAndCommit(ctx, control, [{ record, event }]))) return settle(ctx, control, failing, 'abandoned');
      return settle(ctx, control, failing, 'done');
    } catch (err) {
      const failure = classifyFailure(err);
      failing.failingSinceMs ??= Date.now();
      let delayMs: number;
      if (failure.kind === 'poison') {
        countNext = true;
        const attempts = count?.attempts ?? 1;
        await bestEffort(ctx, () => recordPoison(ctx.pool, key, failure.reason, failure.message));
        if (attempts >= ctx.policy.deliveryLimit) return deadLetter(ctx, control, record, { reason: failure.reason, error: failure.message, attempts }, failing);
        delayMs = retryWait(ctx, attempts - 1, Infinity);
      } else {
        const late = reportFailing(ctx, control, [record], failure, failing.failingSinceMs);
        if (late.deadLetterNow) return deadLetter(ctx, control, record, { reason: 'deadline exceeded', error: failure.message, attempts: attempt + 1 }, failing);
        delayMs = retryWait(ctx, attempt, late.msUntilNextChange);
      }
      logRetry(ctx, control, recordIds(record, ctx.definition.name), failure, attempt + 1, delayMs);
      if (!(await control.pause(delayMs))) {
        if (!countNext) await bestEffort(ctx, () => uncountAttempt(ctx.pool, key));
        return settle(ctx, control, failing, 'abandoned');
      }
    }
  }
  return settle(ctx, control, failing, 'abandoned');
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

interface DeadLetterFacts {
  reason: DeadLetterReason;
  error: string;
  attempts: number;
}

/** Sends the record to the dead letter topic (retrying while Kafka refuses), then commits past it. */
async function deadLetter(ctx: ProcessingContext, control: PartitionControl, record: SourceRecord, facts: DeadLetterFacts, failing: Held): Promise<Outcome> {
  const consumer = ctx.definition.name;
  const firstFailureAt = new Date(failing.failingSinceMs ?? Date.now());
  for (let attempt = 0; control.active(); attempt += 1) {
    try {
      await sendToDeadLetterTopic(ctx.producer, record, { ...facts, firstFailureAt, consumer });
      ctx.logger.error({ ...recordIds(record, consumer), reason: facts.reason, error: facts.error, attempts: facts.attempts }, `dead-lettered: ${facts.reason}`);
      ctx.events.emit('deadLettered', { topic: record.topic, partition: record.partition, reason: facts.reason });
    } catch (err) {
      const delayMs = retryWait(ctx, attempt, Infinity);
      ctx.logger.warn({ ...recordIds(record, consumer), error: errorMessage(err), delayMs }, 'the dead letter topic did not take the record; retrying');
      if (!(await control.pause(delayMs))) return settle(ctx, control, failing, 'abandoned');
      continue;
    }
    const moved = await commitPast(ctx, control, record.offset);
    return settle(ctx, control, failing, moved ? 'done' : 'abandoned');
  }
  return 'abandoned';
}

// ── shared steps ──────────────────────────────────────────────────────────────────────────────

/** Ends a unit of work: a partition that was held by a failure is reported free again. */
function settle<T extends Outcome | 'isolate'>(ctx: ProcessingContext, control: PartitionControl, unit: Held, outcome: T): T {
  if (unit.failingSinceMs !== undefined && outcome !== 'isolate') ctx.events.emit('recovered', { topic: control.topic, partition: control.partition });
  return outcome;
}

/** Emits `failing` (the alert's source) and says how late the held events are. */
function reportFailing(ctx: ProcessingContext, control: PartitionControl, records: readonly SourceRecord[], failure: Failure & { kind: 'infrastructure' }, failingSinceMs: number) {
  const late = latenessOf(ctx.definition, ctx.policy, records, failingSinceMs);
  ctx.events.emit('failing', { topic: control.topic, partition: control.partition, code: failure.code, error: failure.message, oldestEventAgeMs: late.oldestAgeMs, pastDeadline: late.pastDeadline });
  return late;
}

/** Capped, fully jittered backoff that never sleeps past the next deadline decision. */
function retryWait(ctx: ProcessingContext, attempt: number, msUntilNextChange: number): number {
  const delay = retryDelay({ attempt, baseMs: ctx.policy.retryBaseMs, capMs: ctx.policy.retryCapMs });
  return Math.max(0, Math.min(delay, msUntilNextChange + 10));
}

function logRetry(ctx: ProcessingContext, control: PartitionControl, ids: Record<string, unknown>, failure: Failure, attempt: number, delayMs: number): void {
  const detail = failure.kind === 'poison' ? { reason: failure.reason } : { code: failure.code };
  ctx.logger.warn(
    { consumer: ctx.definition.name, topic: control.topic, partition: control.partition, ...ids, kind: failure.kind, ...detail, error: failure.message, attempt, delayMs },
    failure.kind === 'poison' ? 'the record failed as poison; retrying it up to the delivery limit' : 'the infrastructure failed; retrying, the partition held in order',
  );
  ctx.events.emit('retry', { topic: control.topic, partition: control.partition, kind: failure.kind, attempt, delayMs });
}

/** Bookkeeping that must not turn one failure into another: logged, never thrown. */
async function bestEffort(ctx: ProcessingContext, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (err) {
    ctx.logger.warn({ consumer: ctx.definition.name, error: errorMessage(err) }, 'could not update a delivery attempt count');
  }
}
