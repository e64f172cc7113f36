/**
 * The consumer's inbox (migrations/000001_inbox.sql): the hot queries that make a redelivered
 * event id change nothing.
 */
import type { Pool, PoolClient } from '../../lib/postgres.js';
import { withTransaction } from '../../lib/postgres.js';
import type { ConsumedEvent } from './types.js';

/**
 * Inserts the events' ids (duplicates inside the batch included) and returns the ids that were
 * new, i.e. whose effects this transaction must apply.
 */
export async function insertInboxRows(client: PoolClient, consumer: string, events: readonly ConsumedEvent[]): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  const result = await client.query<{ event_id: string }>(
    /* sql */ `
    INSERT INTO inbox (consumer, event_id, event_type, source_topic, source_partition, source_offset)
    SELECT $1, e.event_id, e.event_type, e.source_topic, e.source_partition, e.source_offset
      FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[])
        AS e(event_id, event_type, source_topic, source_partition, source_offset)
    ON CONFLICT (consumer, event_id) DO NOTHING
    RETURNING event_id`,
    [
      consumer,
      events.map((e) => e.id),
      events.map((e) => e.type),
      events.map((e) => e.record.topic),
      events.map((e) => e.record.partition),
      events.map((e) => e.record.offset),
    ],
  );
  return new Set(result.rows.map((row) => row.event_id));
}

/** The events whose id is in `fresh`, each id once (its first occurrence), in their order. */
export function firstOccurrences(events: readonly ConsumedEvent[], fresh: ReadonlySet<string>): ConsumedEvent[] {
  const taken = new Set<string>();
  return events.filter((event) => {
    if (!fresh.has(event.id) || taken.has(event.id)) return false;
    taken.add(event.id);
    return true;
  });
}

export type ClaimOutcome = 'claimed' | 'already done' | 'claimed elsewhere';

/**
 * Claims the inbox row before an external effect: a new row, a claim of this delivery's own
 * (`token`: it failed before the stamp and may go on at once), or a claim older than
 * `abandonedAfterMs` taken over. 'already done' when the effect was stamped; 'claimed elsewhere'
 * when another delivery's recent claim is still open (it may be sending right now).
 */
export async function claimForExternalEffect(pool: Pool, consumer: string, event: ConsumedEvent, abandonedAfterMs: number, token: string): Promise<ClaimOutcome> {
  return withTransaction(pool, async (client) => {
    const claimed = await client.query(
      /* sql */ `
      INSERT INTO inbox (consumer, event_id, event_type, source_topic, source_partition, source_offset, status, claims, claimed_at, claim_token)
      VALUES ($1, $2, $3, $4, $5, $6, 'claimed', 1, now(), $8)
      ON CONFLICT (consumer, event_id) DO UPDATE SET claimed_at = now(), claims = inbox.claims + 1, claim_token = $8
        WHERE inbox.status = 'claimed'
          AND (inbox.claim_token = $8 OR inbox.claimed_at < now() - make_interval(secs => $7::double precision / 1000))
      RETURNING event_id`,
      [consumer, event.id, event.type, event.record.topic, event.record.partition, event.record.offset, abandonedAfterMs, token],
    );
    if (claimed.rowCount === 1) return 'claimed';
    const existing = await client.query<{ status: string }>(
      /* sql */ `SELECT status FROM inbox WHERE consumer = $1 AND event_id = $2`,
      [consumer, event.id],
    );
    return existing.rows[0]?.status === 'claimed' ? 'claimed elsewhere' : 'already done';
  }, { retries: 0 });
}

/** Stamps the external effect as done. */
export async function markEffectSent(pool: Pool, consumer: string, eventId: string): Promise<void> {
  await pool.query(
    /* sql */ `UPDATE inbox SET status = 'sent', completed_at = now() WHERE consumer = $1 AND event_id = $2`,
    [consumer, eventId],
  );
}
