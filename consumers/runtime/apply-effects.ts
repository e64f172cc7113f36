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

async function applyOneByOneWithClaims(ctx: ProcessingContext, effects: ExternalEffects, events: readonly ConsumedEvent[]): Promise<GroupOutcome> {
  const consumer = ctx.definition.name;
  const applied: ConsumedEvent[] = [];
  let duplicates = 0;
  for (const event of events) {
    const claim = await claimForExternalEffect(ctx.pool, consumer, event, effects.claimAbandonedAfterMs);
    if (claim === 'already done') {
      duplicates += 1;
      continue;
    }
    if (claim === 'claimed elsewhere') {
      throw new TransientError('claim_open', `event ${event.id} is claimed by a delivery that may still be running; retrying until the claim is abandoned`);
    }
    await effects.perform(event);
    await markEffectSent(ctx.pool, consumer, event.id);
    applied.push(event);
  }
  return { applied, duplicates };
}

export function applyGroup(ctx: ProcessingContext, events: readonly ConsumedEvent[]): Promise<GroupOutcome> {
  const { effects } = ctx.definition;
  return effects.kind === 'transactional' ? applyInOneTransaction(ctx, effects, events) : applyOneByOneWithClaims(ctx, effects, events);
}
