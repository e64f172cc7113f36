/**
 * Redrive: puts chosen dead letters back on their source topic with the same key, value and
 * original headers (ce_id included; the dlq_* headers stripped, `redriven_at` added so the
 * deadline starts again). A dry run by default; rate-limited; every redriven record is recorded
 * in the consumer database's `redrives` table (and logged), so it is redriven once unless asked again.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka, Producer } from '../../lib/kafka.js';
import { createProducer } from '../../lib/kafka.js';
import type { Logger } from '../../lib/logger.js';
import { type Pool, withTransaction } from '../../lib/postgres.js';
import { sleep } from '../../lib/wait.js';
import { withoutDeadLetterHeaders } from '../runtime/dead-letter.js';
import { REDRIVEN_AT_HEADER } from '../runtime/headers.js';
import { printable } from './printable.js';
import { type DeadLetter, readDeadLetters } from './read-dead-letters.js';
import { type DeadLetterSelection, type ReasonGroup, groupByReason, selectDeadLetters } from './select.js';

export async function listDeadLetters(
  kafka: Kafka,
  deadLetterTopic: string,
): Promise<{ deadLetters: DeadLetter[]; byReason: ReasonGroup[] }> {
  const deadLetters = await readDeadLetters(kafka, deadLetterTopic);
  return { deadLetters, byReason: groupByReason(deadLetters) };
}

export interface RedriveOptions {
  kafka: Kafka;
  pool: Pool;
  logger: Logger;
  deadLetterTopic: string;
  selection: DeadLetterSelection;
  /** False: report what would be redriven, change nothing. */
  apply: boolean;
  ratePerSecond: number;
  /** Who asked (user or ticket), recorded with each row. */
  redrivenBy: string;
  /** Redrive dead letters that were redriven before, too. */
  again?: boolean;
}

export interface RedriveResult {
  runId: string;
  dryRun: boolean;
  selected: DeadLetter[];
  redriven: DeadLetter[];
  /** Selected but redriven earlier (left alone unless `again`). */
  skipped: DeadLetter[];
}

async function redriveOne(
  pool: Pool,
  producer: Producer,
  dead: DeadLetter,
  runId: string,
  options: RedriveOptions,
): Promise<boolean> {
  const sourceTopic = dead.sourceTopic;
  if (sourceTopic === undefined)
    throw new Error(
      `dead letter ${dead.partition}/${dead.offset} has no dlq_source_topic header; it cannot be redriven`,
    );
  return withTransaction(
    pool,
    async (client) => {
      const recorded = await client.query(
        /* sql */ `
      INSERT INTO redrives (dlq_topic, dlq_partition, dlq_offset, event_id, reason, source_topic, redriven_by, run_id)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
      ON CONFLICT (dlq_topic, dlq_partition, dlq_offset) DO UPDATE
        SET times = redrives.times + 1, run_id = excluded.run_id, redriven_by = excluded.redriven_by, redriven_at = now()
        WHERE $9
      RETURNING times`,
        [
          dead.topic,
          dead.partition,
          dead.offset,
          dead.ceId ?? null,
          dead.reason,
          sourceTopic,
          options.redrivenBy,
          runId,
          options.again === true,
        ],
      );
      if (recorded.rowCount === 0) return false;
      const headers = { ...withoutDeadLetterHeaders(dead.headers), [REDRIVEN_AT_HEADER]: new Date().toISOString() };
      await producer.send({ topic: sourceTopic, acks: -1, messages: [{ key: dead.key, value: dead.value, headers }] });
      return true;
    },
    { retries: 0 },
  );
}

async function alreadyRedriven(pool: Pool, deadLetters: readonly DeadLetter[]): Promise<Set<string>> {
  const rows = await pool.query<{ at: string }>(
    /* sql */ `SELECT dlq_topic || '/' || dlq_partition || '/' || dlq_offset AS at FROM redrives
      WHERE (dlq_topic, dlq_partition, dlq_offset) IN (SELECT * FROM unnest($1::text[], $2::int[], $3::bigint[]))`,
    [deadLetters.map((d) => d.topic), deadLetters.map((d) => d.partition), deadLetters.map((d) => d.offset)],
  );
  return new Set(rows.rows.map((r) => r.at));
}

async function sendAll(
  options: RedriveOptions,
  chosen: readonly DeadLetter[],
  runId: string,
): Promise<{ redriven: DeadLetter[]; skipped: DeadLetter[] }> {
  const producer = createProducer(options.kafka, { allowAutoTopicCreation: false });
  await producer.connect();
  const redriven: DeadLetter[] = [];
  const skipped: DeadLetter[] = [];
  try {
    for (const dead of chosen) {
      if (redriven.length > 0) await sleep(1000 / options.ratePerSecond);
      const sent = await redriveOne(options.pool, producer, dead, runId, options);
      (sent ? redriven : skipped).push(dead);
      // Header text, escaped: JSON leaves DEL and the C1 controls as they are, and this log goes to a terminal.
      const fromRecord = (text: string | undefined) => (text === undefined ? undefined : printable(text));
      options.logger.info(
        {
          run_id: runId,
          ce_id: fromRecord(dead.ceId),
          dlq_topic: dead.topic,
          dlq_partition: dead.partition,
          dlq_offset: dead.offset,
          source_topic: fromRecord(dead.sourceTopic),
          reason: fromRecord(dead.reason),
        },
        sent ? 'redriven' : 'redriven before; skipped (use --again)',
      );
    }
  } finally {
    await producer.disconnect();
  }
  return { redriven, skipped };
}

export async function redrive(options: RedriveOptions): Promise<RedriveResult> {
  const runId = randomUUID();
  const selected = selectDeadLetters(await readDeadLetters(options.kafka, options.deadLetterTopic), options.selection);
  if (!options.apply) {
    const before = options.again ? new Set<string>() : await alreadyRedriven(options.pool, selected);
    const skipped = selected.filter((d) => before.has(`${d.topic}/${d.partition}/${d.offset}`));
    return { runId, dryRun: true, selected, redriven: selected.filter((d) => !skipped.includes(d)), skipped };
  }
  const { redriven, skipped } = await sendAll(options, selected, runId);
  options.logger.info(
    {
      run_id: runId,
      dlq_topic: options.deadLetterTopic,
      selected: selected.length,
      redriven: redriven.length,
      skipped: skipped.length,
    },
    'redrive finished',
  );
  return { runId, dryRun: false, selected, redriven, skipped };
}
