/**
 * Applies a group of decoded events exactly once: the inbox decides which are new.
 * Transactional effects: one transaction for the inbox rows, the effects of the new events, and
 * the clearing of the partition's attempt counts.
 * External effects: claim the group's inbox rows (with this instance's token), perform, stamp;
 * a stamp that failed after the effect was performed is retried without performing again. An
 * event that comes past its `dead-letter` deadline and was never performed is neither claimed nor
 * performed: it is handed back as expired, to be dead-lettered.
 */
import { withTransaction } from '../../lib/postgres.js';
import type { PartitionControl, ProcessingContext } from './context.js';
import { clearAttempts } from './delivery-attempts.js';
import { TransientError, notPerformed } from './failures.js';
import {
  claimForExternalEffects,
  firstOccurrences,
  inboxStatuses,
  insertInboxRows,
  markEffectsSent,
  releaseClaims,
} from './inbox.js';
import { expiredOnArrival } from './delivery.js';
import type { ConsumedEvent, ExternalEffects, TransactionalEffects } from './types.js';

export interface EffectsOutcome {
  applied: ConsumedEvent[];
  duplicates: number;
  /** External effects: events that came past their `dead-letter` deadline, not performed; to be dead-lettered. */
  expired: ConsumedEvent[];
}

/** Attempt counts to forget with the effects: the partition's, through this offset. */
export interface ClearCounts {
  throughOffset: string;
}

async function applyInOneTransaction(
  ctx: ProcessingContext,
  control: PartitionControl,
  effects: TransactionalEffects,
  events: readonly ConsumedEvent[],
  clear: ClearCounts | undefined,
): Promise<EffectsOutcome> {
  const consumer = ctx.definition.name;
  // Retries are the runtime's (same group, backoff to the deadline), so none here.
  return withTransaction(
    ctx.pool,
    async (client) => {
      const fresh = await insertInboxRows(client, consumer, events);
      const applied = firstOccurrences(events, fresh);
      if (applied.length > 0) await effects.apply(client, applied);
      if (clear !== undefined)
        await clearAttempts(client, consumer, control.topic, control.partition, clear.throughOffset);
      return { applied, duplicates: events.length - applied.length, expired: [] };
    },
    { retries: 0 },
  );
}

/** The group's events by key, each key's events in offset order. */
function byKey(events: readonly ConsumedEvent[]): ConsumedEvent[][] {
  const groups = new Map<string, ConsumedEvent[]>();
  for (const event of events) {
    const key = event.key ?? `no key ${event.id}`;
    groups.set(key, [...(groups.get(key) ?? []), event]);
  }
  return [...groups.values()];
}

/**
 * Of the group's events, those that came past their `dead-letter` deadline (expiredOnArrival):
 * `expired` have no inbox row (never claimed, never sent: to be dead-lettered), `sentBefore` are
 * done already (duplicates). One with an open claim was under way before: it takes the claim path
 * (its claim, or claim_open while another instance may be sending it).
 */
async function pastDeadline(
  ctx: ProcessingContext,
  events: readonly ConsumedEvent[],
): Promise<{ expired: Set<string>; sentBefore: Set<string> }> {
  const now = Date.now();
  const late = events
    .filter((e) => !ctx.performedNotStamped.has(e.id) && expiredOnArrival(ctx.definition, ctx.policy, e.record, now))
    .map((e) => e.id);
  const statuses = await inboxStatuses(ctx.pool, ctx.definition.name, late);
  return {
    expired: new Set(late.filter((id) => !statuses.has(id))),
    sentBefore: new Set(late.filter((id) => statuses.get(id) === 'sent')),
  };
}

/**
 * External effects: the group's claims in one statement, then `concurrency` keys at a time, each
 * key in order, a heartbeat after each send; then the stamps in one statement. Every lane runs to
 * its end (or until the batch is abandoned, or a claim of another delivery stops its key); what
 * was sent is stamped even when a lane failed, the claims of events never started are given up,
 * and then the first failure is thrown: the group's retry finds the sent events already done, and
 * a stamp that failed is retried without sending.
 */
async function applyWithClaims(
  ctx: ProcessingContext,
  control: PartitionControl,
  effects: ExternalEffects,
  events: readonly ConsumedEvent[],
  clear: ClearCounts | undefined,
): Promise<EffectsOutcome> {
  const consumer = ctx.definition.name;
  const outcome: EffectsOutcome = { applied: [], duplicates: 0, expired: [] };
  const { expired, sentBefore } = await pastDeadline(ctx, events);
  const toClaim = events.filter(
    (e) => !ctx.performedNotStamped.has(e.id) && !expired.has(e.id) && !sentBefore.has(e.id),
  );
  const claims = await claimForExternalEffects(
    ctx.pool,
    consumer,
    toClaim,
    effects.claimAbandonedAfterMs,
    ctx.claimToken,
  );
  const sent: ConsumedEvent[] = [];
  const started = new Set<string>();
  const handled = new Set<string>();
  const performInOrder = async (key: readonly ConsumedEvent[]) => {
    for (const event of key) {
      if (!control.active()) return;
      if (handled.has(event.id) || sentBefore.has(event.id)) {
        outcome.duplicates += 1; // the same ce_id twice in one group, or done before
        continue;
      }
      handled.add(event.id);
      if (expired.has(event.id)) {
        outcome.expired.push(event);
        continue;
      }
      if (!ctx.performedNotStamped.has(event.id)) {
        const claim = claims.get(event.id);
        if (claim === 'already done') {
          outcome.duplicates += 1;
          continue;
        }
        if (claim !== 'claimed') {
          throw new TransientError(
            'claim_open',
            `event ${event.id} is claimed by another delivery that may still be running; retrying until the claim is abandoned`,
          );
        }
        await performOnce(effects, event, started);
        ctx.performedNotStamped.add(event.id);
        await control.heartbeat();
      }
      sent.push(event);
    }
  };
  const failed = await inLanes(byKey(events), effects.concurrency ?? 1, performInOrder);
  await markEffectsSent(
    ctx.pool,
    consumer,
    sent.map((event) => event.id),
  );
  for (const event of sent) ctx.performedNotStamped.delete(event.id);
  outcome.applied.push(...sent);
  const unstarted = [...claims].filter(([id, claim]) => claim === 'claimed' && !started.has(id)).map(([id]) => id);
  await releaseClaims(ctx.pool, consumer, unstarted, ctx.claimToken);
  if (failed) throw failed.reason;
  if (clear !== undefined && control.active())
    await clearAttempts(ctx.pool, consumer, control.topic, control.partition, clear.throughOffset);
  return outcome;
}

/** Performs the event, noting it as started unless the effect says it never started. */
async function performOnce(effects: ExternalEffects, event: ConsumedEvent, started: Set<string>): Promise<void> {
  started.add(event.id);
  try {
    await effects.perform(event);
  } catch (err) {
    if (notPerformed(err)) started.delete(event.id);
    throw err;
  }
}

/** Runs `work` over `keys`, `concurrency` at a time; every lane runs to its end; the first failure, if any. */
async function inLanes(
  keys: readonly ConsumedEvent[][],
  concurrency: number,
  work: (key: readonly ConsumedEvent[]) => Promise<void>,
): Promise<PromiseRejectedResult | undefined> {
  let next = 0;
  const lane = async () => {
    for (let index = next++; index < keys.length; index = next++) await work(keys[index] ?? []);
  };
  const lanes = Array.from({ length: Math.max(1, Math.min(concurrency, keys.length)) }, lane);
  return (await Promise.allSettled(lanes)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
}

/** Applies the events' effects; counts through `clear` are forgotten with them. Throws on failure. */
export function applyEffects(
  ctx: ProcessingContext,
  control: PartitionControl,
  events: readonly ConsumedEvent[],
  clear: ClearCounts | undefined,
): Promise<EffectsOutcome> {
  const { effects } = ctx.definition;
  return effects.kind === 'transactional'
    ? applyInOneTransaction(ctx, control, effects, events, clear)
    : applyWithClaims(ctx, control, effects, events, clear);
}
