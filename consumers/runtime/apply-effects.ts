/**
 * Applies a group of decoded events exactly once: the inbox decides which are new.
 * Transactional effects: one transaction for the inbox rows and the effects of the new events.
 * External effects: per event, claim the inbox row, perform, stamp.
 */
import { withTransaction } from '../../lib/postgres.js';
import type { ProcessingContext } from './context.js';
import { TransientError } from './failures.js';
import { claimForExternalEffect, firstOccurrences, insertInboxRows, markEffectSent } from './inbox.js';
import type { ConsumedEvent, ExternalEffects, TransactionalEffects } from './types.js';

export interface GroupOutcome {
  applied: ConsumedEvent[];
  duplicates: number;
}

async function applyInOneTransaction(ctx: ProcessingContext, effects: TransactionalEffects, events: readonly ConsumedEvent[]): Promise<GroupOutcome> {
  const consumer = ctx.definition.name;
  // Retries are the runtime's (same group, backoff to the deadline), so none here.
  return withTransaction(
    ctx.pool,
    async (client) => {
      const fresh = await insertInboxRows(client, consumer, events);
      const applied = firstOccurrences(events, fresh);
      if (applied.length > 0) await effects.apply(client, applied);
      return { applied, duplicates: events.length - applied.length };
    },
    { retries: 0 },
  );
}

/** Claim, perform, stamp: one event whose effect leaves the building. */
async function performOnce(ctx: ProcessingContext, effects: ExternalEffects, event: ConsumedEvent, outcome: GroupOutcome): Promise<void> {
  const consumer = ctx.definition.name;
  const claim = await claimForExternalEffect(ctx.pool, consumer, event, effects.claimAbandonedAfterMs);
  if (claim === 'already done') {
    outcome.duplicates += 1;
    return;
  }
  if (claim === 'claimed elsewhere') {
    throw new TransientError('claim_open', `event ${event.id} is claimed by a delivery that may still be running; retrying until the claim is abandoned`);
  }
  await effects.perform(event);
  await markEffectSent(ctx.pool, consumer, event.id);
  outcome.applied.push(event);
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
 * External effects, `concurrency` keys at a time, each key in order. Every lane runs to its end;
 * then the first failure is thrown, and the group's retry finds the finished events already done.
 */
async function applyOneByOneWithClaims(ctx: ProcessingContext, effects: ExternalEffects, events: readonly ConsumedEvent[]): Promise<GroupOutcome> {
  const outcome: GroupOutcome = { applied: [], duplicates: 0 };
  const keys = byKey(events);
  let next = 0;
  const lane = async () => {
    for (let index = next++; index < keys.length; index = next++) {
      for (const event of keys[index] ?? []) await performOnce(ctx, effects, event, outcome);
    }
  };
  const lanes = Array.from({ length: Math.max(1, Math.min(effects.concurrency ?? 1, keys.length)) }, lane);
  const failed = (await Promise.allSettled(lanes)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return outcome;
}

export function applyGroup(ctx: ProcessingContext, events: readonly ConsumedEvent[]): Promise<GroupOutcome> {
  const { effects } = ctx.definition;
  return effects.kind === 'transactional' ? applyInOneTransaction(ctx, effects, events) : applyOneByOneWithClaims(ctx, effects, events);
}
