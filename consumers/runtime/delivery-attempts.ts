/**
 * Durable attempt counts (migrations/000005 and 000007): what lets a record that crashes the
 * process reach the delivery limit across restarts, and a poison count survive a restart. The
 * counts only grow: a try is started (counted) before it runs and finished when it comes back;
 * what counts against a record is its poison failures plus the tries that never finished, the
 * ones the process died in. Nothing is taken back, so a finish the database refused is kept here
 * and written with the next start: an outage that spans a rebalance leaves no count against a
 * good record. (A process that dies before it writes a finish leaves that try unfinished: it
 * counts as a try the process died in.)
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
  /** The number of the try about to start (what its finish names). */
  tryNumber: number;
  /** Against the record so far, the try about to start included: poison failures plus unfinished tries. */
  attempts: number;
  /** Earlier tries that never finished: the process died in them. */
  unfinishedBefore: number;
  /** The last poison failure recorded, if any: the dead letter's reason at the limit. */
  lastReason: DeadLetterReason | undefined;
  lastError: string | undefined;
  /** For a group: what counts against its first record alone (it crashed alone before: isolate at once). */
  headRecordAttempts: number;
}

/** A try that came back, and its poison failure if that is how it came back. */
export interface Finish {
  key: AttemptKey;
  tryNumber: number;
  poison?: { reason: DeadLetterReason; error: string };
}

/** What counts against the record, of the row named `row`. */
const against = (row: string) => `${row}.poison_failures + ${row}.started - cardinality(${row}.finished)`;

const KEY_WHERE = 'consumer = $1 AND topic = $2 AND partition = $3 AND first_offset = $4 AND scope = $5';

const keyValues = (key: AttemptKey) => [key.consumer, key.topic, key.partition, key.offset, key.scope];

function sameKey(a: AttemptKey, b: AttemptKey): boolean {
  return (
    a.consumer === b.consumer &&
    a.topic === b.topic &&
    a.partition === b.partition &&
    a.offset === b.offset &&
    a.scope === b.scope
  );
}

/** Writes one finish; a finish already written (by number) is not written again. */
async function writeFinish(db: Pool | PoolClient, finish: Finish): Promise<void> {
  await db.query(
    /* sql */ `
    UPDATE delivery_attempts
       SET finished = finished || $6::int,
           poison_failures = poison_failures + (CASE WHEN $7::text IS NULL THEN 0 ELSE 1 END),
           last_reason = coalesce($7, last_reason),
           last_error = coalesce(left($8, 2000), last_error),
           updated_at = now()
     WHERE ${KEY_WHERE} AND NOT ($6 = ANY (finished))`,
    [...keyValues(finish.key), finish.tryNumber, finish.poison?.reason ?? null, finish.poison?.error ?? null],
  );
}

/**
 * One consumer process's attempt counts: starts, and the finishes the database has not taken yet
 * (written, in one transaction, before the next start). The finishes outlive a rebalance, which
 * drops the partitions' states but not this.
 */
export class AttemptCounts {
  readonly #pool: Pool;
  #unwritten: Finish[] = [];

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  /** Finishes not written yet. */
  get unwritten(): readonly Finish[] {
    return this.#unwritten;
  }

  /** Counts the try about to start, after the finishes not yet written; returns the count with it. Throws when the database refuses. */
  async start(key: AttemptKey): Promise<AttemptCount> {
    const client = await this.#pool.connect();
    const writing = [...this.#unwritten];
    let row: StartRow | undefined;
    try {
      await client.query('BEGIN');
      for (const finish of writing) await writeFinish(client, finish);
      row = (await client.query<StartRow>(START_SQL, keyValues(key))).rows[0];
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
    this.#unwritten = this.#unwritten.filter((finish) => !writing.includes(finish));
    const started = row?.started ?? 1;
    return {
      tryNumber: started,
      attempts: row?.against ?? 1,
      unfinishedBefore: Math.max(0, started - 1 - (row?.finished ?? 0)),
      lastReason: (row?.last_reason ?? undefined) as DeadLetterReason | undefined,
      lastError: row?.last_error ?? undefined,
      headRecordAttempts: key.scope === 'group' ? (row?.head_record_attempts ?? 0) : 0,
    };
  }

  /**
   * Finishes a try that came back (with its poison failure, when that is how). Never throws: a
   * finish the database refuses is kept and written with the next start. True when written now.
   */
  async finish(finish: Finish): Promise<boolean> {
    try {
      await writeFinish(this.#pool, finish);
      return true;
    } catch {
      if (!this.#unwritten.some((f) => sameKey(f.key, finish.key) && f.tryNumber === finish.tryNumber))
        this.#unwritten.push(finish);
      return false;
    }
  }
}

interface StartRow {
  started: number;
  finished: number;
  against: number;
  last_reason: string | null;
  last_error: string | null;
  head_record_attempts: number;
}

const START_SQL = /* sql */ `
    INSERT INTO delivery_attempts AS a (consumer, topic, partition, first_offset, scope, started)
    VALUES ($1, $2, $3, $4, $5, 1)
    ON CONFLICT (consumer, topic, partition, first_offset, scope)
      DO UPDATE SET started = a.started + 1, updated_at = now()
    RETURNING a.started, cardinality(a.finished) AS finished, ${against('a')} AS against, a.last_reason, a.last_error,
      coalesce((SELECT ${against('r')} FROM delivery_attempts r
                 WHERE r.consumer = $1 AND r.topic = $2 AND r.partition = $3 AND r.first_offset = $4 AND r.scope = 'record'), 0) AS head_record_attempts`;

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
