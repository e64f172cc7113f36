/**
 * Open-loop latency at fixed rates: a generator writes events through the seat service's event
 * writer on a schedule (event i is due at start + i / rate) without waiting for the pipeline, and
 * every latency is measured from the scheduled time, so a stalled writer or pipeline shows up as
 * latency (no coordinated omission). The three consumers run in-process on the runtime.
 */
import { createEmailSender } from '../consumers/confirmation-email/send-confirmation.js';
import { confirmationEmailConsumer } from '../consumers/confirmation-email/consumer.js';
import { startConsumer } from '../consumers/runtime/consumer.js';
import { RuntimeEvents } from '../consumers/runtime/lifecycle.js';
import type { ConsumedEvent, ConsumerDefinition } from '../consumers/runtime/types.js';
import type { Pool } from '../lib/postgres.js';
import { startNaiveConsumer } from './naive-consumer.js';
import { salesLedgerConsumer } from '../consumers/sales-ledger/consumer.js';
import { seatAvailabilityConsumer } from '../consumers/seat-availability/consumer.js';
import { sleep, waitFor } from '../lib/wait.js';
import { BENCH_POLICY } from './backlog-drain.js';
import { type BenchContext, type Scenario, consumerDatabase } from './context.js';
import { atScale } from './scales.js';
import { percentiles } from './report.js';
import type { SeatService } from '../seat-service/service.js';
import { startBenchSeatPipeline } from './seat-pipeline.js';
import { startDiscardingSmtp } from './smtp-sink.js';
import { writeWorkload } from './workload.js';

const SEATS = 2_000;

/** Per event id: when the generator meant to write it, and when its transaction had committed. */
export type Written = Map<string, { scheduled: number; committed: number }>;
/** Per event id, as one consumer saw it: Kafka record timestamp, handed to the handler, effect committed. */
export type Seen = Map<string, { appended: number; handed: number; done?: number }>;

interface Watched {
  label: string;
  seen: Seen;
  target?: string;
}

/**
 * Transactional effects: "handed" when the runtime calls apply (after fetch, decode and the inbox
 * insert), "done" at the runtime's `applied` event for it (after the consumer-database commit and
 * the offset commit). A partition's groups are applied one after another, so the ids of the last
 * apply call of a partition are the ones its next `applied` events report, in order.
 */
function watchTransactional(definition: ConsumerDefinition, events: RuntimeEvents, seen: Seen): ConsumerDefinition {
  if (definition.effects.kind !== 'transactional') return definition;
  const { apply } = definition.effects;
  const pending = new Map<string, string[]>();
  events.on('applied', ({ topic, partition }) => {
    const id = pending.get(`${topic}:${partition}`)?.shift();
    const entry = id === undefined ? undefined : seen.get(id);
    if (entry !== undefined) entry.done = Date.now();
  });
  return {
    ...definition,
    effects: {
      kind: 'transactional',
      apply: async (client, batch) => {
        const now = Date.now();
        const byPartition = new Map<string, string[]>();
        for (const event of batch) {
          seen.set(event.id, { appended: Number(event.record.timestamp), handed: now });
          const key = `${event.record.topic}:${event.record.partition}`;
          byPartition.set(key, [...(byPartition.get(key) ?? []), event.id]);
        }
        for (const [key, ids] of byPartition) pending.set(key, ids);
        await apply(client, batch);
      },
    },
  };
}

/** External effects: "handed" when the send starts, "done" when the SMTP server accepted it. */
export function watchExternal(definition: ConsumerDefinition, seen: Seen): ConsumerDefinition {
  if (definition.effects.kind !== 'external') return definition;
  const effects = definition.effects;
  return {
    ...definition,
    effects: {
      ...effects,
      perform: async (event) => {
        const entry = { appended: Number(event.record.timestamp), handed: Date.now() } as {
          appended: number;
          handed: number;
          done?: number;
        };
        seen.set(event.id, entry);
        await effects.perform(event);
        entry.done = Date.now();
      },
    },
  };
}

/** Writes `rate` events per second for `durationMs`, starting at event `from`; each write is one transaction, never awaited by the schedule. */
export async function generate(
  service: SeatService,
  from: number,
  rate: number,
  durationMs: number,
  written: Written,
  workload: { ordersOnly?: boolean } = {},
): Promise<number> {
  const total = Math.round((rate * durationMs) / 1000);
  const start = Date.now();
  const writes: Promise<void>[] = [];
  let next = 0;
  while (next < total) {
    const due = Math.min(total, Math.floor(((Date.now() - start) * rate) / 1000) + 1);
    if (due > next) {
      const first = next;
      writes.push(
        writeWorkload(service, {
          from: from + first,
          count: due - first,
          seats: SEATS,
          withOrders: true,
          ordersOnly: workload.ordersOnly ?? false,
        }).then((rows) => {
          const committed = Date.now();
          for (const row of rows)
            written.set(row.id, { scheduled: start + ((row.index - from) * 1000) / rate, committed });
        }),
      );
      next = due;
    }
    await sleep(2);
  }
  await Promise.all(writes);
  return total;
}

/** The end-to-end percentiles (scheduled → effect committed) of the events in `written` that `watched` saw done. */
function endToEnd(watched: Watched, written: Written): ReturnType<typeof percentiles> {
  return percentiles(
    [...written].flatMap(([id, w]) => {
      const done = watched.seen.get(id)?.done;
      return done === undefined ? [] : [Math.round(done - w.scheduled)];
    }),
  );
}

function recordPhase(
  ctx: BenchContext,
  rate: number,
  watched: Watched,
  written: Written,
  baseline?: { label: string; value: number },
): void {
  const stages: {
    name: string;
    of: (w: { scheduled: number; committed: number }, s: { appended: number; handed: number; done: number }) => number;
    target?: string;
  }[] = [
    { name: 'scheduled → effect committed (end to end)', of: (w, s) => s.done - w.scheduled, target: watched.target },
    { name: 'scheduled → outbox commit returned', of: (w) => w.committed - w.scheduled },
    { name: 'outbox commit → Kafka record timestamp', of: (w, s) => s.appended - w.committed },
    { name: 'record timestamp → handed to the handler', of: (_w, s) => s.handed - s.appended },
    { name: 'handed → effect committed', of: (_w, s) => s.done - s.handed },
  ];
  const pairs = [...written].flatMap(([id, w]) => {
    const s = watched.seen.get(id);
    return s?.done === undefined ? [] : [{ w, s: { ...s, done: s.done } }];
  });
  for (const stage of stages) {
    const p = percentiles(pairs.map(({ w, s }) => Math.round(stage.of(w, s))));
    const isEndToEnd = stage === stages[0];
    ctx.record({
      measure: `${rate.toLocaleString('en-US')}/s, ${watched.label}: ${stage.name}`,
      value: p.p99,
      unit: 'ms',
      display: `p50 ${p.p50} · p99 ${p.p99} · max ${p.max} ms (${p.count})`,
      percentiles: p,
      ...(stage.target === undefined ? {} : { target: stage.target }),
      ...(isEndToEnd && baseline !== undefined ? { baseline } : {}),
    });
  }
}

export interface OpenLoopHarness {
  /** Seat availability, sales ledger, confirmation email. */
  watched: Watched[];
  /** Writes `rate` events per second for `durationMs` on the schedule; see generate. */
  generate(rate: number, durationMs: number, written: Written): Promise<number>;
  /** Effects committed so far, over the three consumers, of the events in `written`. */
  done(written: Written): number;
  /** The effects the events in `written` call for: every seat event once, every order twice. */
  expected(written: Written, count: number): number;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  /** The Connect worker the pipeline's connector runs on (default: the stack's). */
  connectUrl?: string;
  /** The consumer runtime (default), or the naive baseline consumer for the same three consumers. */
  consumers?: 'runtime' | 'naive';
}

/** Starts the three consumers of `definitions`, instrumented into `watched`, and waits until each has joined. */
async function startWatchedConsumers(
  ctx: BenchContext,
  label: string,
  definitions: ConsumerDefinition[],
  watched: Watched[],
  pools: Pool[],
  kind: 'runtime' | 'naive',
): Promise<{ stop: () => Promise<void> }[]> {
  const running: { stop: () => Promise<void> }[] = [];
  for (const [i, definition] of definitions.entries()) {
    const seen = watched[i]?.seen ?? new Map();
    const pool = pools[i];
    if (pool === undefined) throw new Error(`no database for consumer ${i}`);
    if (kind === 'naive') {
      const onApplied = (event: ConsumedEvent) => {
        const now = Date.now();
        seen.set(event.id, { appended: Number(event.record.timestamp), handed: now, done: now });
      };
      const naive = await startNaiveConsumer({
        kafka: ctx.kafka,
        groupId: ctx.name(`${label}_${i}`),
        registry: ctx.registry,
        pool,
        definition,
        partitionsConsumedConcurrently: 3,
        fromBeginning: false,
        onApplied,
      });
      running.push(naive);
      await naive.joined;
      continue;
    }
    const events = new RuntimeEvents();
    const joined = new Promise<void>((resolve) => events.on('groupJoined', () => resolve()));
    const instrumented =
      definition.effects.kind === 'transactional'
        ? watchTransactional(definition, events, seen)
        : watchExternal(definition, seen);
    running.push(
      await startConsumer({
        definition: instrumented,
        kafka: ctx.kafka,
        groupId: ctx.name(`${label}_${i}`),
        registry: ctx.registry,
        pool,
        logger: ctx.logger,
        policy: BENCH_POLICY,
        partitionsConsumedConcurrently: 3,
        events,
        fromBeginning: false,
      }),
    );
    await joined;
  }
  return running;
}

/** A seat pipeline of its own and the three consumers, instrumented, joined and warmed up (2 s at 100/s). */
export async function startOpenLoopHarness(
  ctx: BenchContext,
  label: string,
  options: HarnessOptions = {},
): Promise<OpenLoopHarness> {
  const connectUrl = options.connectUrl ?? ctx.stack.connectUrl;
  const pipeline = await startBenchSeatPipeline(ctx, label, connectUrl);
  const smtp = await startDiscardingSmtp();
  const transport = createEmailSender({
    smtpHost: '127.0.0.1',
    smtpPort: smtp.port,
    smtpSecure: false,
    smtpUser: '',
    smtpPassword: '',
    smtpTimeoutMs: 10_000,
    mailFrom: 'bench@example.test',
    sendConcurrency: 4,
  });
  const databases = await Promise.all(
    ['seats', 'ledger', 'email'].map((db) => consumerDatabase(ctx, `${label}_${db}`, 4)),
  );
  const prefix = pipeline.connector.topicPrefix;
  const watched: Watched[] = [
    { label: 'seat availability', seen: new Map(), target: 'p50 ≤ 50 ms, p99 ≤ 250 ms (at 1,000/s)' },
    { label: 'sales ledger', seen: new Map(), target: 'p50 ≤ 50 ms, p99 ≤ 250 ms (at 1,000/s)' },
    { label: 'confirmation email', seen: new Map(), target: 'p99 ≤ 1 s (at 1,000/s)' },
  ];
  const running: { stop: () => Promise<void> }[] = [];
  const stop = async () => {
    for (const consumer of running) await consumer.stop();
    transport.close();
    await smtp.close();
    await Promise.all(databases.map((d) => d.drop()));
    await pipeline.teardown();
  };
  let from = 0;
  const harness: OpenLoopHarness = {
    watched,
    generate: async (rate, durationMs, written) => {
      const count = await generate(pipeline.service, from, rate, durationMs, written);
      from += count;
      return count;
    },
    done: (written) =>
      watched.reduce((n, w) => n + [...written.keys()].filter((id) => w.seen.get(id)?.done !== undefined).length, 0),
    expected: (written, count) => count + 2 * (written.size - count),
    stop,
  };
  try {
    const definitions = [
      seatAvailabilityConsumer('bench-seats', prefix),
      salesLedgerConsumer('bench-ledger', prefix),
      confirmationEmailConsumer('bench-email', prefix, transport, 600_000),
    ];
    running.push(
      ...(await startWatchedConsumers(
        ctx,
        label,
        definitions,
        watched,
        databases.map((d) => d.pool),
        options.consumers ?? 'runtime',
      )),
    );
    const warmUp: Written = new Map();
    const count = await harness.generate(100, 2_000, warmUp);
    await waitFor(() => harness.done(warmUp) >= harness.expected(warmUp, count), {
      timeoutMs: 120_000,
      intervalMs: 250,
      description: 'warm-up events handled',
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return harness;
}

/** Writes `rate` events/s for `durationMs` through `harness` and waits (up to 180 s) until every effect committed. */
async function runRate(
  ctx: BenchContext,
  harness: OpenLoopHarness,
  rate: number,
  durationMs: number,
  what: string,
  settleMs = 180_000,
): Promise<Written> {
  const written: Written = new Map();
  const count = await harness.generate(rate, durationMs, written);
  const expected = harness.expected(written, count);
  const settled = await waitFor(() => harness.done(written) >= expected, {
    timeoutMs: settleMs,
    intervalMs: 500,
    description: `${rate}/s events handled`,
  }).then(
    () => true,
    () => false,
  );
  if (!settled)
    ctx.note(
      `open loop, ${what} at ${rate}/s: only ${harness.done(written)} of ${expected} effects had committed ${settleMs / 1000} s after the last write; the rows count those that had, so the figures understate the latency.`,
    );
  return written;
}

/** The naive consumers at `rate`, on a pipeline of their own: each consumer's end-to-end p99 by label. */
async function naiveBaseline(ctx: BenchContext, rate: number, durationMs: number): Promise<Map<string, number>> {
  const harness = await startOpenLoopHarness(ctx, 'openloop_naive', { consumers: 'naive' });
  try {
    // A naive consumer that falls behind never catches up at this rate: a minute is enough to show it.
    const written = await runRate(ctx, harness, rate, durationMs, 'the naive consumers', 60_000);
    return new Map(harness.watched.map((w) => [w.label, endToEnd(w, written).p99]));
  } finally {
    await harness.stop();
  }
}

/** The rate the targets are set at; the naive consumers are measured at it as the baseline. */
const BASELINE_RATE = 1_000;

async function run(ctx: BenchContext): Promise<void> {
  const rates = (
    process.env.BENCH_RATES ?? atScale(ctx.scale, { smoke: '250', small: '250,1000', full: '250,1000,3000' })
  )
    .split(',')
    .map(Number);
  const durationMs =
    Number(process.env.BENCH_RATE_SECONDS ?? atScale(ctx.scale, { smoke: 3, small: 10, full: 30 })) * 1000;
  const naive = rates.includes(BASELINE_RATE)
    ? await naiveBaseline(ctx, BASELINE_RATE, durationMs)
    : new Map<string, number>();
  const harness = await startOpenLoopHarness(ctx, 'openloop');
  try {
    for (const rate of rates) {
      const written = await runRate(ctx, harness, rate, durationMs, 'the runtime');
      for (const w of harness.watched) {
        const baseline = rate === BASELINE_RATE ? naive.get(w.label) : undefined;
        recordPhase(
          ctx,
          rate,
          w,
          written,
          baseline === undefined ? undefined : { label: 'naive consumer p99', value: baseline },
        );
      }
    }
    ctx.note(
      `open loop: ${durationMs / 1000} s per rate after a 2 s warm-up at 100/s; seat events on ${SEATS} seats (held, released, held, sold), an order.confirmed with each sale (1 in 4 events), several events per outbox transaction at high rates; consumers in-process in the bench (one node process for the generator and all three consumers), 3 partitions, emails to a discarding loopback SMTP server, sent 4 at a time. The baseline at ${BASELINE_RATE.toLocaleString('en-US')}/s is the naive consumer (one transaction per event; emails claimed, sent and stamped one at a time) for each of the three, on a pipeline of its own, measured first in the same run.`,
    );
    ctx.note(
      'open loop stage times: "scheduled" is the generator\'s plan (start + i / rate); "outbox commit returned" is when COMMIT returned to the generator (after the commit, so the next stage can be slightly negative); the Kafka record timestamp is the one Debezium gave the record when it read the change (before the record waits in its queue for Connect\'s next poll, so that wait counts in the next stage); "handed to the handler" is when the runtime called the effect (after fetch, decode and inbox insert); "effect committed" is the runtime\'s applied event (after the consumer-database commit and the offset commit) or, for email, the SMTP server\'s acceptance.',
    );
  } finally {
    await harness.stop();
  }
}

export const openLoopScenario: Scenario = {
  name: 'open-loop',
  description: 'latency per stage at fixed rates, three consumers, no coordinated omission',
  run,
};
