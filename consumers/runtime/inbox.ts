/**
 * The consumer's inbox (migrations/000001_inbox.sql): the hot queries that make a redelivered
 * event id change nothing.
 */
import type { Pool, PoolClient } from '../../lib/postgres.js';
import { withTransaction } from '../../lib/postgres.js';
import type { ConsumedEvent } from './types.js';

/** The inbox columns of `events` as the parallel arrays both inserts unnest ($2 … $7); the last is the Kafka timestamp in ms. */
function inboxRowArrays(
  events: readonly ConsumedEvent[],
): [string[], string[], string[], number[], string[], string[]] {
  return [
    events.map((e) => e.id),
    events.map((e) => e.type),
    events.map((e) => e.record.topic),
    events.map((e) => e.record.partition),
    events.map((e) => e.record.offset),
    events.map((e) => e.record.timestamp),
  ];
}

/**
 * Inserts the events' ids (duplicates inside the batch included) and returns the ids that were
 * new, i.e. whose effects this transaction must apply.
 */
export async function insertInboxRows(
  client: PoolClient,
  consumer: string,
  events: readonly ConsumedEvent[],
): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  const result = await client.query<{ event_id: string }>(
    /* sql */ `
    INSERT INTO inbox (consumer, event_id, event_type, source_topic, source_partition, source_offset, appended_at)
    SELECT $1, e.event_id, e.event_type, e.source_topic, e.source_partition, e.source_offset, to_timestamp(e.appended_ms / 1000.0)
      FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[], $7::bigint[])
        AS e(event_id, event_type, source_topic, source_partition, source_offset, appended_ms)
    ON CONFLICT (consumer, event_id) DO NOTHING
    RETURNING event_id`,
    [consumer, ...inboxRowArrays(events)],
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
 * Claims the inbox rows before external effects, in one transaction: a new row, a claim of this
 * delivery's own (`token`: it failed before the stamp and may go on at once), or a claim older than
 * `abandonedAfterMs` taken over. 'already done' when the effect was stamped; 'claimed elsewhere'
 * when another delivery's recent claim is still open (it may be sending right now).
 */
export async function claimForExternalEffects(
  pool: Pool,
  consumer: string,
  events: readonly ConsumedEvent[],
  abandonedAfterMs: number,
  token: string,
): Promise<Map<string, ClaimOutcome>> {
  const outcomes = new Map<string, ClaimOutcome>();
  const unique = [...new Map(events.map((event) => [event.id, event])).values()];
  if (unique.length === 0) return outcomes;
  return withTransaction(
    pool,
    async (client) => {
      const claimed = await client.query<{ event_id: string }>(
        /* sql */ `
      INSERT INTO inbox (consumer, event_id, event_type, source_topic, source_partition, source_offset, appended_at, status, claims, claimed_at, claim_token)
      SELECT $1, e.event_id, e.event_type, e.source_topic, e.source_partition, e.source_offset, to_timestamp(e.appended_ms / 1000.0), 'claimed', 1, now(), $9
        FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::bigint[], $7::bigint[])
          AS e(event_id, event_type, source_topic, source_partition, source_offset, appended_ms)
      ON CONFLICT (consumer, event_id) DO UPDATE SET claimed_at = now(), claims = inbox.claims + 1, claim_token = $9
        WHERE inbox.status = 'claimed'
          AND (inbox.claim_token = $9 OR inbox.claimed_at < now() - make_interval(secs => $8::double precision / 1000))
      RETURNING event_id`,
        [consumer, ...inboxRowArrays(unique), abandonedAfterMs, token],
      );
      for (const row of claimed.rows) outcomes.set(row.event_id, 'claimed');
      const others = unique.filter((event) => !outcomes.has(event.id)).map((event) => event.id);
      if (others.length > 0) {
        const existing = await client.query<{ event_id: string; status: string }>(
          /* sql */ `SELECT event_id, status FROM inbox WHERE consumer = $1 AND event_id = ANY($2::text[])`,
          [consumer, others],
        );
        for (const row of existing.rows)
          outcomes.set(row.event_id, row.status === 'claimed' ? 'claimed elsewhere' : 'already done');
      }
      return outcomes;
    },
    { retries: 0 },
  );
}

/** The inbox status (`claimed`, `sent`) of each of `eventIds` that has a row. */
export async function inboxStatuses(
  pool: Pool,
  consumer: string,
  eventIds: readonly string[],
): Promise<Map<string, string>> {
  if (eventIds.length === 0) return new Map();
  const { rows } = await pool.query<{ event_id: string; status: string }>(
    /* sql */ `SELECT event_id, status FROM inbox WHERE consumer = $1 AND event_id = ANY($2::text[])`,
    [consumer, eventIds],
  );
  return new Map(rows.map((row) => [row.event_id, row.status]));
}

/**
 * Gives up this instance's claims of events it never handed to the effect (a lane stopped before
 * them, or the effect refused to start): they count as abandoned at once, so whoever gets the
 * partition next (after a rebalance) sends them without waiting for CLAIM_ABANDONED_AFTER_MS.
 */
export async function releaseClaims(
  pool: Pool,
  consumer: string,
  eventIds: readonly string[],
  token: string,
): Promise<void> {
  if (eventIds.length === 0) return;
  await pool.query(
    /* sql */ `UPDATE inbox SET claimed_at = '-infinity'
      WHERE consumer = $1 AND event_id = ANY($2::text[]) AND claim_token = $3 AND status = 'claimed'`,
    [consumer, eventIds, token],
  );
}

/** Stamps the external effects as done, in one statement. */
export async function markEffectsSent(pool: Pool, consumer: string, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await pool.query(
    /* sql */ `UPDATE inbox SET status = 'sent', completed_at = now() WHERE consumer = $1 AND event_id = ANY($2::text[])`,
    [consumer, eventIds],
  );
}
