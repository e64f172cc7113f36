/**
 * The alternative to reading the WAL: a polling relay on the same workload, side by side with
 * Debezium. The relay is the usual one, done well: every interval it drains the outbox in
 * transactions that lock a batch of unrelayed rows (`FOR UPDATE SKIP LOCKED`, so relays could run
 * side by side), send it to Kafka, mark it relayed and commit. It needs a column the outbox does
 * not have (relayed_at, added on the bench's own copy of the seat database) and an UPDATE per
 * row. The same open-loop generator writes 1,000 events/s for each; one kind of watcher reads the
 * records back, so both sides are measured the same way: commit returned to the writer → the
 * record fetched by a consumer. (Not the record timestamp: Debezium stamps a record when it reads
 * the change, before the record waits in its queue for Connect's next poll, while the relay's
 * producer stamps it at send.)
 */
import type { Producer } from '../lib/kafka.js';
import { createProducer, ensureTopics } from '../lib/kafka.js';
import { percentiles } from '../lib/percentiles.js';
import { type Pool, createPool, withTransaction } from '../lib/postgres.js';
import { sleep, waitFor } from '../lib/wait.js';
import { headerValue } from '../consumers/runtime/headers.js';
import { type AggregateType, topicFor } from '../events/catalogue.js';
import { type BenchContext, type Scenario } from './context.js';
import { atScale } from './scales.js';
import { type Written, generate } from './open-loop.js';
import { openBenchSeatDatabase, startBenchSeatPipeline } from './seat-pipeline.js';

const RATE = 1_000;
const BATCH = 500;
/** The bench pipeline's heartbeat: Debezium's one statement on the seat database. */
const DEBEZIUM_HEARTBEAT_MS = 2_000;

interface RelayCounters {
  polls: number;
  statements: number;
}

interface OutboxRow {
  id: string;
  aggregatetype: string;
  aggregateid: string;
  type: string;
  payload: Buffer;
  ce_source: string;
  ce_specversion: string;
  ce_time: string;
  ce_subject: string;
  content_type: string;
}

/** One drain: as many locked batches as there are unrelayed rows; each batch is one transaction of four statements (three when empty). */
async function drainOnce(pool: Pool, producer: Producer, topicPrefix: string, counters: RelayCounters): Promise<void> {
  for (;;) {
    counters.polls += 1;
    const sent = await withTransaction(
      pool,
      async (client) => {
        const { rows } = await client.query<OutboxRow>(/* sql */ `
        select id::text, aggregatetype, aggregateid, type, payload, ce_source, ce_specversion, ce_time, ce_subject, content_type
          from outbox where relayed_at is null order by created_at limit ${BATCH} for update skip locked`);
        counters.statements += 3; // begin, select, commit
        if (rows.length === 0) return 0;
        const byTopic = new Map<string, OutboxRow[]>();
        for (const row of rows) {
          const topic = topicFor(topicPrefix, row.aggregatetype as AggregateType);
          const batch = byTopic.get(topic);
          if (batch === undefined) byTopic.set(topic, [row]);
          else batch.push(row);
        }
        await producer.sendBatch({
          acks: -1,
          topicMessages: [...byTopic].map(([topic, batch]) => ({
            topic,
            messages: batch.map((row) => ({
              key: row.aggregateid,
              value: row.payload,
              headers: {
                ce_id: row.id,
                ce_type: row.type,
                ce_source: row.ce_source,
                ce_specversion: row.ce_specversion,
                ce_time: row.ce_time,
                ce_subject: row.ce_subject,
                'content-type': row.content_type,
              },
            })),
          })),
        });
        await client.query(/* sql */ `update outbox set relayed_at = now() where id = any($1::uuid[])`, [
          rows.map((r) => r.id),
        ]);
        counters.statements += 1;
        return rows.length;
      },
      { retries: 0 },
    );
    if (sent < BATCH) return;
  }
}

/** The relay's bookkeeping, on a bench copy of the seat database only: the real outbox has no such column. */
async function addRelayColumn(pool: Pool): Promise<void> {
  await pool.query(
    /* sql */ `alter table outbox add column relayed_at timestamptz; create index outbox_unrelayed on outbox (created_at) where relayed_at is null`,
  );
}

async function withRelayTopics<T>(
  ctx: BenchContext,
  topicPrefix: string,
  body: (topics: string[]) => Promise<T>,
): Promise<T> {
  const topics = [topicFor(topicPrefix, 'seat'), topicFor(topicPrefix, 'order')];
  const admin = ctx.kafka.admin();
  await admin.connect();
  try {
    await ensureTopics(
      admin,
      topics.map((topic) => ({ topic, numPartitions: 3 })),
    );
    return await body(topics);
  } finally {
    await admin.deleteTopics({ topics }).catch(() => undefined);
    await admin.disconnect();
  }
}

/**
 * The relay draining a backlog already in the outbox as fast as it can (one drain, batch after
 * batch): rows per second from its first poll until every row was acknowledged by Kafka. Adds
 * the relay's column to that database.
 */
export async function pollingRelayDrainRate(
  ctx: BenchContext,
  databaseUrl: string,
  topicPrefix: string,
): Promise<number> {
  const pool = createPool({
    connectionString: databaseUrl,
    applicationName: 'bench-polling-relay',
    logger: ctx.logger,
    max: 2,
  });
  const producer = createProducer(ctx.kafka);
  try {
    await addRelayColumn(pool);
    await producer.connect();
    return await withRelayTopics(ctx, topicPrefix, async () => {
      const started = performance.now();
      await drainOnce(pool, producer, topicPrefix, { polls: 0, statements: 0 });
      const seconds = (performance.now() - started) / 1000;
      const { rows } = await pool.query<{ n: number }>(
        `select count(*)::int as n from outbox where relayed_at is not null`,
      );
      return (rows[0]?.n ?? 0) / seconds;
    });
  } finally {
    await producer.disconnect();
    await pool.end();
  }
}

function startPollingRelay(
  pool: Pool,
  producer: Producer,
  topicPrefix: string,
  intervalMs: number,
): { counters: RelayCounters; stop: () => Promise<void> } {
  const counters: RelayCounters = { polls: 0, statements: 0 };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = Date.now();
      await drainOnce(pool, producer, topicPrefix, counters);
      await sleep(Math.max(0, intervalMs - (Date.now() - started)));
    }
  })();
  return {
    counters,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/** Reads the topics back from the start and keeps, by ce_id, when each record was fetched. */
async function watchTimestamps(
  ctx: BenchContext,
  label: string,
  topics: string[],
): Promise<{ appended: Map<string, number>; stop: () => Promise<void> }> {
  const appended = new Map<string, number>();
  const consumer = ctx.kafka.consumer({ groupId: ctx.name(label), maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  await consumer.run({
    partitionsConsumedConcurrently: 3,
    eachBatch: async ({ batch }) => {
      const fetchedAt = Date.now();
      for (const message of batch.messages) {
        const id = headerValue(message.headers, 'ce_id');
        if (id !== undefined) appended.set(id, fetchedAt);
      }
    },
  });
  return { appended, stop: () => consumer.disconnect() };
}

/** Commit → fetched, of every event in `written`, once the watcher has seen them all. */
async function commitToKafka(
  written: Written,
  appended: Map<string, number>,
  what: string,
): Promise<ReturnType<typeof percentiles>> {
  await waitFor(() => [...written.keys()].every((id) => appended.has(id)), {
    timeoutMs: 120_000,
    intervalMs: 200,
    description: `${what}: every event on Kafka`,
  });
  return percentiles([...written].map(([id, w]) => Math.round((appended.get(id) ?? Number.NaN) - w.committed)));
}

const display = (p: ReturnType<typeof percentiles>) => `p50 ${p.p50} · p99 ${p.p99} · max ${p.max} ms (${p.count})`;

async function measureDebezium(ctx: BenchContext, durationMs: number): Promise<ReturnType<typeof percentiles>> {
  const pipeline = await startBenchSeatPipeline(ctx, 'relaycmp_debezium');
  const watcher = await watchTimestamps(ctx, 'relaycmp_debezium_watch', [pipeline.topics.seat, pipeline.topics.order]);
  try {
    const warmUp: Written = new Map();
    const from = await generate(pipeline.service, 0, 100, 2_000, warmUp);
    await commitToKafka(warmUp, watcher.appended, 'Debezium warm-up');
    const written: Written = new Map();
    await generate(pipeline.service, from, RATE, durationMs, written);
    return await commitToKafka(written, watcher.appended, 'Debezium');
  } finally {
    await watcher.stop();
    await pipeline.teardown();
  }
}

async function run(ctx: BenchContext): Promise<void> {
  const intervals = (
    process.env.BENCH_RELAY_INTERVALS_MS ??
    atScale(ctx.scale, { smoke: '100', small: '20,100', full: '5,20,50,100,250' })
  )
    .split(',')
    .map(Number);
  const durationMs = atScale(ctx.scale, { smoke: 2, small: 5, full: 15 }) * 1000;
  const debezium = await measureDebezium(ctx, durationMs);
  ctx.record({
    measure: `Debezium at ${RATE.toLocaleString('en-US')}/s: outbox commit → fetched by a consumer`,
    value: debezium.p99,
    unit: 'ms',
    display: display(debezium),
    percentiles: debezium,
  });

  const database = await openBenchSeatDatabase(ctx, 'relaycmp_polling');
  const admin = createPool({
    connectionString: database.url,
    applicationName: 'bench-polling-relay',
    logger: ctx.logger,
    max: 2,
  });
  const producer = createProducer(ctx.kafka);
  try {
    await addRelayColumn(admin);
    await producer.connect();
    const runs = await withRelayTopics(ctx, database.name, async (topics) => {
      const watcher = await watchTimestamps(ctx, 'relaycmp_polling_watch', topics);
      try {
        let from = 0;
        const measured: {
          intervalMs: number;
          latency: ReturnType<typeof percentiles>;
          statementsPerSecond: number;
          updatesPerSecond: number;
        }[] = [];
        for (const intervalMs of intervals) {
          const relay = startPollingRelay(admin, producer, database.name, intervalMs);
          try {
            const warmUp: Written = new Map();
            from += await generate(database.service, from, 100, 1_000, warmUp);
            await commitToKafka(warmUp, watcher.appended, `relay every ${intervalMs} ms, warm-up`);
            const before = { statements: relay.counters.statements, updates: await rowsUpdated(admin), at: Date.now() };
            const written: Written = new Map();
            from += await generate(database.service, from, RATE, durationMs, written);
            const latency = await commitToKafka(written, watcher.appended, `relay every ${intervalMs} ms`);
            await sleep(1_000); // the statistics collector flushes about once a second
            const seconds = (Date.now() - before.at) / 1000;
            measured.push({
              intervalMs,
              latency,
              statementsPerSecond: (relay.counters.statements - before.statements) / seconds,
              updatesPerSecond: ((await rowsUpdated(admin)) - before.updates) / seconds,
            });
          } finally {
            await relay.stop();
          }
        }
        return measured;
      } finally {
        await watcher.stop();
      }
    });
    for (const r of runs) {
      ctx.record({
        measure: `polling relay every ${r.intervalMs} ms at ${RATE.toLocaleString('en-US')}/s: outbox commit → fetched by a consumer`,
        value: r.latency.p99,
        unit: 'ms',
        display: display(r.latency),
        percentiles: r.latency,
        baseline: { label: 'Debezium p99', value: debezium.p99 },
      });
    }
    const best = runs.reduce((a, b) => (b.latency.p99 < a.latency.p99 ? b : a));
    ctx.record({
      measure: `polling relay at its best interval (${best.intervalMs} ms): statements/s it adds to the seat database`,
      value: best.statementsPerSecond,
      unit: 'statements/s',
      baseline: { label: 'Debezium: its heartbeat query', value: 1000 / DEBEZIUM_HEARTBEAT_MS },
    });
    ctx.record({
      measure: `polling relay at its best interval (${best.intervalMs} ms): outbox rows updated/s (dead tuples for vacuum)`,
      value: best.updatesPerSecond,
      unit: 'rows/s',
      baseline: { label: 'Debezium: none', value: 0 },
    });
    ctx.note(
      `polling relay: ${durationMs / 1000} s at ${RATE}/s per interval (${intervals.join(', ')} ms), batches of ${BATCH} locked with FOR UPDATE SKIP LOCKED, sent with acks=all, marked relayed_at and committed; statements counted by the relay (begin, select, update, commit per batch); rows updated from pg_stat_user_tables. Both sides are read back by the same kind of watcher (a kafkajs consumer, max wait 100 ms) and timed from COMMIT returned to the writer to the record fetched. The relay also needs a column and a partial index the outbox does not have, and writes every row twice (insert, update): WAL and vacuum work Debezium does not cause.`,
    );
  } finally {
    await producer.disconnect();
    await admin.end();
    await database.service.close();
    await database.drop();
  }
}

async function rowsUpdated(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `select coalesce(n_tup_upd, 0)::text as n from pg_stat_user_tables where relname = 'outbox'`,
  );
  return Number(rows[0]?.n ?? 0);
}

export const pollingRelayScenario: Scenario = {
  name: 'polling-relay',
  description:
    'a FOR UPDATE SKIP LOCKED polling relay side by side with Debezium: latency and the load it adds to the seat database',
  run,
};
