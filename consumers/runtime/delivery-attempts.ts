/**
 * Durable attempt counts (migrations/000005): what lets a record that crashes the process reach
 * the delivery limit across restarts, and a poison count survive a restart.
 */
import type { Pool, PoolClient } from '../../lib/postgres.js';
import type { DeadLetterReason } from './failures.js';

export interface AttemptKey {
  consumer: string;
  topic: string;
  partition: number;
  /** The first offset of the group, or the record's offset. */
  offset: string;
  scope: 'group' | 'record';
}

export interface AttemptCount {
  /** Attempts so far, the one about to start included. */
  attempts: number;
  /** The last poison failure recorded, if any: the dead letter's reason at the limit. */
  lastReason: DeadLetterReason | undefined;
  lastError: string | undefined;
  /** For a group: attempts of its first record alone (it crashed alone before: isolate at once). */
  headRecordAttempts: number;
}

/** Counts the attempt about to start; returns the count with it. */
export async function countAttempt(pool: Pool, key: AttemptKey): Promise<AttemptCount> {
  const result = await pool.query<{
    attempts: number;
    last_reason: string | null;
    last_error: string | null;
    head_record_attempts: number;
  }>(
    /* sql */ `
    INSERT INTO delivery_attempts AS a (consumer, topic, partition, first_offset, scope, attempts)
    VALUES ($1, $2, $3, $4, $5, 1)
    ON CONFLICT (consumer, topic, partition, first_offset, scope)
      DO UPDATE SET attempts = a.attempts + 1, updated_at = now()
    RETURNING a.attempts, a.last_reason, a.last_error,
      coalesce((SELECT r.attempts FROM delivery_attempts r
                 WHERE r.consumer = $1 AND r.topic = $2 AND r.partition = $3 AND r.first_offset = $4 AND r.scope = 'record'), 0) AS head_record_attempts`,
    [key.consumer, key.topic, key.partition, key.offset, key.scope],
  );
  const row = result.rows[0];
  return {
    attempts: row?.attempts ?? 1,
    lastReason: (row?.last_reason ?? undefined) as DeadLetterReason | undefined,
    lastError: row?.last_error ?? undefined,
    headRecordAttempts: key.scope === 'group' ? (row?.head_record_attempts ?? 0) : 0,
  };
}

/** Records why a counted attempt failed as poison. */
export async function recordPoison(
  pool: Pool,
  key: AttemptKey,
  reason: DeadLetterReason,
  error: string,
): Promise<void> {
  await pool.query(
    /* sql */ `
    UPDATE delivery_attempts SET last_reason = $6, last_error = left($7, 2000), updated_at = now()
     WHERE consumer = $1 AND topic = $2 AND partition = $3 AND first_offset = $4 AND scope = $5`,
    [key.consumer, key.topic, key.partition, key.offset, key.scope, reason, error],
  );
}

/**
 * Takes back a counted attempt that did not run to its end for reasons that are not the record's
 * (the batch was abandoned for a rebalance or a stop, or the infrastructure failed).
 */
export async function uncountAttempt(pool: Pool, key: AttemptKey): Promise<void> {
  await pool.query(
    /* sql */ `
    UPDATE delivery_attempts SET attempts = attempts - 1, updated_at = now()
     WHERE consumer = $1 AND topic = $2 AND partition = $3 AND first_offset = $4 AND scope = $5 AND attempts > 0`,
    [key.consumer, key.topic, key.partition, key.offset, key.scope],
  );
}

/** Forgets the partition's counts up to and including `throughOffset` (their records are done). */
export async function clearAttempts(
  db: Pool | PoolClient,
  consumer: string,
  topic: string,
  partition: number,
  throughOffset: string,
): Promise<void> {
  await db.query(
    /* sql */ `DELETE FROM delivery_attempts WHERE consumer = $1 AND topic = $2 AND partition = $3 AND first_offset <= $4`,
    [consumer, topic, partition, throughOffset],
  );
}
