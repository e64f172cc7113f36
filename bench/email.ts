/**
 * The confirmation email against a provider as slow as real ones: an SMTP provider in its own
 * process (bench/provider) that takes 100 ms to accept each message. Three measures, each with
 * today's settings (4 in flight, no pace) on the same provider as the same-run baseline:
 * commit → accepted at the open-loop rate (1,000 events/s, 250 emails/s); the highest email rate
 * whose lag stays flat (orders only); and a throttle at the peak (the provider answers 451 above
 * a rate for 60 s), counted from the provider's own tally: good orders dead-lettered, emails
 * doubled or lost, and how long after the throttle ended the backlog was gone.
 */
import { confirmationEmailConsumer, confirmationEmailSettings } from '../consumers/confirmation-email/consumer.js';
import { createEmailSender } from '../consumers/confirmation-email/send-confirmation.js';
import { startConsumer } from '../consumers/runtime/consumer.js';
import { RuntimeEvents } from '../consumers/runtime/lifecycle.js';
import type { Pool } from '../lib/postgres.js';
import { parseSettings } from '../lib/settings.js';
import { waitFor } from '../lib/wait.js';
import { type BenchContext, type Scenario, consumerDatabase } from './context.js';
import { ALLOWED_RISE_MS, medianLag } from './flat-lag.js';
import { type Seen, type Written, generate, watchExternal } from './open-loop.js';
import { type ProviderProcess as Provider, spawnProvider } from './provider/client.js';
import { percentiles } from './report.js';
import { atScale } from './scales.js';
import { startBenchSeatPipeline } from './seat-pipeline.js';
import { deadlineBacklog, throttleRun } from './email-faults.js';
import { writeWorkload } from './workload.js';

/** The provider's time to accept one message. */
const ACCEPT_DELAY_MS = 100;
/** Today's settings before this scenario existed: 4 sends in flight, unpaced. */
const TODAY = 4;
/** Orders per transaction (one ce_time each) when a backlog is written. */
const BACKLOG_CHUNK = 50;

export interface EmailHarness {
  seen: Seen;
  dlqTopic: string;
  /** The email consumer's database (its inbox and redrives). */
  pool: Pool;
  /**
   * With the connector paused, writes `count` orders whose ce_times spread evenly over the last
   * `spanMs`, oldest first, then resumes it: the backlog an outage leaves. Their ce_times by id.
   */
  writeBacklog(count: number, spanMs: number): Promise<Map<string, number>>;
  /** Writes `rate` events/s for `durationMs` (see open-loop's generate). */
  generate(rate: number, durationMs: number, written: Written, ordersOnly: boolean): Promise<number>;
  /** Orders of `written` whose email the provider has accepted (as the consumer saw it). */
  accepted(written: Written): number;
  stop(): Promise<void>;
}

/** The email consumer's settings as shipped (its deadline, backoff, partitions), on the bench's stack. */
function emailDefaults(ctx: BenchContext) {
  return parseSettings(confirmationEmailSettings, {
    CONSUMER_DATABASE_URL: ctx.stack.postgresAdminUrl,
    KAFKA_BROKERS: ctx.stack.kafkaBrokers.join(','),
    SCHEMA_REGISTRY_URL: ctx.stack.registryUrl,
  });
}

/** A seat pipeline of its own and the email consumer alone, sending `concurrency` at a time to `provider`. */
async function startEmailHarness(
  ctx: BenchContext,
  label: string,
  provider: Provider,
  concurrency: number,
): Promise<EmailHarness> {
  const pipeline = await startBenchSeatPipeline(ctx, label);
  const database = await consumerDatabase(ctx, `${label}_email`, 4);
  const config = emailDefaults(ctx);
  const sender = createEmailSender({
    ...config,
    smtpPort: provider.smtpPort,
    smtpTimeoutMs: 10_000,
    sendConcurrency: concurrency,
  });
  const seen: Seen = new Map();
  const events = new RuntimeEvents();
  const joined = new Promise<void>((resolve) => events.on('groupJoined', () => resolve()));
  let from = 0;
  const cleanups: (() => Promise<void>)[] = [
    () => pipeline.teardown(),
    () => database.drop(),
    () => Promise.resolve(sender.close()),
  ];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  };
  try {
    const consumer = await startConsumer({
      definition: watchExternal(
        confirmationEmailConsumer(ctx.name(`${label}_email`), pipeline.connector.topicPrefix, sender, 600_000),
        seen,
      ),
      kafka: ctx.kafka,
      groupId: ctx.name(`${label}_email`),
      registry: ctx.registry,
      pool: database.pool,
      logger: ctx.logger,
      // The email's own policy: 30 minutes to its deadline, the default backoff.
      policy: config,
      partitionsConsumedConcurrently: config.partitionsConcurrently,
      events,
      fromBeginning: false,
    });
    cleanups.push(() => consumer.stop());
    await joined;
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    seen,
    dlqTopic: `${pipeline.topics.order}.dlq`,
    pool: database.pool,
    writeBacklog: async (count, spanMs) => {
      await pipeline.pause();
      const times = new Map<string, number>();
      const start = Date.now() - spanMs;
      for (let i = 0; i < count; i += BACKLOG_CHUNK) {
        const chunk = Math.min(BACKLOG_CHUNK, count - i);
        const at = new Date(start + Math.floor(((i + chunk) * spanMs) / count)); // the last chunk is now
        const rows = await writeWorkload(pipeline.service, { from, count: chunk, seats: 2_000, ordersOnly: true, at });
        for (const row of rows) times.set(row.id, at.getTime());
        from += chunk;
      }
      await pipeline.resume();
      return times;
    },
    generate: async (rate, durationMs, written, ordersOnly) => {
      const count = await generate(pipeline.service, from, rate, durationMs, written, { ordersOnly });
      from += count;
      return count;
    },
    accepted: (written) => ordersOf(written, seen).filter((id) => seen.get(id)?.done !== undefined).length,
    stop,
  };
}

/** The ids in `written` that are orders: the ones the email consumer was handed (every order is, once it arrives). */
function ordersOf(written: Written, seen: Seen): string[] {
  return [...written.keys()].filter((id) => seen.has(id));
}

/** Waits until `expected` orders of `written` were accepted, up to `timeoutMs`; whether they were. */
export async function settle(
  harness: EmailHarness,
  written: Written,
  expected: number,
  timeoutMs: number,
): Promise<boolean> {
  return waitFor(() => harness.accepted(written) >= expected, {
    timeoutMs,
    intervalMs: 250,
    description: 'emails accepted',
  }).then(
    () => true,
    () => false,
  );
}

/** How many orders the events of the mixed workload hold: one in four is a sale with its order. */
function mixedOrders(written: Written): number {
  return Math.floor(written.size / 5);
}

/** Commit → accepted percentiles of the orders of `written` that were accepted. */
function commitToAccepted(harness: EmailHarness, written: Written): ReturnType<typeof percentiles> {
  return percentiles(
    [...written].flatMap(([id, w]) => {
      const done = harness.seen.get(id)?.done;
      return done === undefined ? [] : [Math.round(done - w.committed)];
    }),
  );
}

/** Where the time went, per stage: p50/p99 of commit → record timestamp → handed to the send → accepted. */
function stages(harness: EmailHarness, written: Written): string {
  const pairs = [...written].flatMap(([id, w]) => {
    const seen = harness.seen.get(id);
    return seen?.done === undefined ? [] : [{ w, seen: { ...seen, done: seen.done } }];
  });
  const stage = (name: string, of: (pair: (typeof pairs)[number]) => number) => {
    const p = percentiles(pairs.map((pair) => Math.round(of(pair))));
    return `${name} p50 ${p.p50} · p99 ${p.p99} ms`;
  };
  return [
    stage('scheduled → commit', ({ w }) => w.committed - w.scheduled),
    stage('commit → record timestamp', ({ w, seen }) => seen.appended - w.committed),
    stage('record timestamp → handed to the send', ({ seen }) => seen.handed - seen.appended),
    stage('handed → accepted', ({ seen }) => seen.done - seen.handed),
  ].join('; ');
}

/** The mixed workload at `rate` events/s for `durationMs`: commit → accepted. */
async function openLoop(
  harness: EmailHarness,
  rate: number,
  durationMs: number,
): Promise<{ p: ReturnType<typeof percentiles>; settled: boolean; stages: string }> {
  const written: Written = new Map();
  await harness.generate(rate, durationMs, written, false);
  const settled = await settle(harness, written, mixedOrders(written), 120_000);
  return { p: commitToAccepted(harness, written), settled, stages: stages(harness, written) };
}

/** Rising email rates (orders only) until one is not flat: the highest flat one, and what each showed. */
async function flatRate(
  harness: EmailHarness,
  rates: readonly number[],
  windowMs: number,
): Promise<{ highest: number; tried: string[] }> {
  const tried: string[] = [];
  let highest = 0;
  for (const rate of rates) {
    const written: Written = new Map();
    const start = Date.now();
    const count = await harness.generate(rate, windowMs, written, true);
    const settled = await settle(harness, written, count, 60_000);
    const early = medianLag(written, harness.seen, start + windowMs / 4, start + windowMs / 2);
    const late = medianLag(written, harness.seen, start + windowMs - windowMs / 4, start + windowMs);
    const flat = settled && late <= early + ALLOWED_RISE_MS;
    tried.push(
      `${rate.toLocaleString('en-US')}/s ${flat ? 'flat' : 'not flat'} (median lag ${Math.round(early)} → ${Math.round(late)} ms${settled ? '' : `; ${harness.accepted(written)} of ${count} accepted 60 s after the last write`}${flat ? '' : `; ${stages(harness, written)}`})`,
    );
    if (!flat) break;
    highest = rate;
  }
  return { highest, tried };
}

async function withHarness<T>(
  ctx: BenchContext,
  label: string,
  provider: Provider,
  concurrency: number,
  use: (harness: EmailHarness) => Promise<T>,
): Promise<T> {
  const harness = await startEmailHarness(ctx, label, provider, concurrency);
  try {
    const warmUp: Written = new Map();
    const count = await harness.generate(50, 2_000, warmUp, true);
    await settle(harness, warmUp, count, 60_000);
    return await use(harness);
  } finally {
    await harness.stop();
  }
}

async function run(ctx: BenchContext): Promise<void> {
  const seconds = Number(process.env.BENCH_EMAIL_SECONDS ?? atScale(ctx.scale, { smoke: 3, small: 10, full: 30 }));
  const rates = (
    process.env.BENCH_EMAIL_RATES ??
    atScale(ctx.scale, { smoke: '100', small: '250,500,1000', full: '250,500,1000,1500' })
  )
    .split(',')
    .map(Number);
  // Today's settings reach about 4 in flight / 100 ms = 40 emails/s at most.
  const baselineRates = (
    process.env.BENCH_EMAIL_BASELINE_RATES ?? atScale(ctx.scale, { smoke: '25', small: '25,50', full: '25,50,100' })
  )
    .split(',')
    .map(Number);
  const throttleSeconds = Number(
    process.env.BENCH_EMAIL_THROTTLE_SECONDS ?? atScale(ctx.scale, { smoke: 3, small: 20, full: 60 }),
  );
  const concurrency = Number(
    process.env.BENCH_EMAIL_CONCURRENCY ?? confirmationEmailSettings.settings.sendConcurrency.default,
  );
  const provider = await spawnProvider({ acceptDelayMs: ACCEPT_DELAY_MS });
  try {
    const [today, now] = [TODAY, concurrency].map((n) => ({ label: n === TODAY ? 'today' : 'now', n }));
    const results = new Map<
      string,
      Awaited<ReturnType<typeof openLoop>> & { flat: Awaited<ReturnType<typeof flatRate>> }
    >();
    // BENCH_EMAIL_BASELINE=no: tuning runs without today's settings (no baseline, no ratio). The
    // smoke scale, whose figures mean nothing, runs no baseline either: it is the same code with 4.
    const withBaseline = process.env.BENCH_EMAIL_BASELINE !== 'no' && ctx.scale !== 'smoke';
    for (const setting of withBaseline ? [today, now] : [now]) {
      if (setting === undefined) continue;
      results.set(setting.label, {
        // A pipeline each: the open loop can leave a backlog (today's settings do), which would
        // make the first window of the search a drain instead of a steady rate.
        ...(await withHarness(ctx, `email_${setting.label}`, provider, setting.n, (harness) =>
          openLoop(harness, 1_000, seconds * 1000),
        )),
        flat: await withHarness(ctx, `email_flat_${setting.label}`, provider, setting.n, (harness) =>
          flatRate(harness, setting.n === TODAY ? baselineRates : rates, seconds * 1000),
        ),
      });
    }
    const mine = results.get('now');
    if (mine === undefined) return;
    const base = results.get('today') ?? {
      p: { p50: NaN, p99: NaN, max: NaN, count: 0 },
      settled: false,
      stages: 'not measured',
      flat: { highest: NaN, tried: ['not measured (BENCH_EMAIL_BASELINE=no, or the smoke scale)'] },
    };
    ctx.record({
      measure: `1,000 events/s (250 emails/s), confirmation email: outbox commit → accepted by a ${ACCEPT_DELAY_MS} ms provider`,
      value: mine.p.p99,
      unit: 'ms',
      display: `p50 ${mine.p.p50} · p99 ${mine.p.p99} · max ${mine.p.max} ms (${mine.p.count})${mine.settled ? '' : ', not all accepted'}`,
      ...(withBaseline ? { baseline: { label: `today's settings (${TODAY} in flight) p99`, value: base.p.p99 } } : {}),
      target: 'p99 ≤ 1 s',
    });
    ctx.record({
      measure: `highest email rate with flat lag (orders only, ${seconds} s windows, ${ACCEPT_DELAY_MS} ms provider)`,
      value: mine.flat.highest,
      unit: 'emails/s',
      ...(withBaseline
        ? { baseline: { label: `today's settings (${TODAY} in flight)`, value: base.flat.highest } }
        : {}),
      target: '≥ 1,000 emails/s',
    });
    ctx.note(
      `email: ${concurrency} sends in flight (SMTP_CONCURRENCY; its default unless BENCH_EMAIL_CONCURRENCY) against today's ${TODAY}, each on a seat pipeline of its own with the email consumer alone, to one provider process accepting each message after ${ACCEPT_DELAY_MS} ms. Stages at 1,000 events/s, now: ${mine.stages}; today: ${base.stages}. Flat-lag search, now: ${mine.flat.tried.join('; ')}. Today: ${base.flat.tried.join('; ')}. Flat: the median lag of the window's last quarter within 500 ms of its second quarter, every email accepted within 60 s.`,
    );
    const throttle = await withHarness(ctx, 'email_throttle', provider, concurrency, (harness) =>
      throttleRun(ctx, harness, provider, {
        rate: 250,
        throttleRate: 100,
        leadMs: atScale(ctx.scale, { smoke: 2_000, small: 5_000, full: 5_000 }),
        throttleMs: throttleSeconds * 1000,
        // Load goes on after the throttle, so the backlog drains under it (not in an idle pipeline).
        tailMs: atScale(ctx.scale, { smoke: 3_000, small: 30_000, full: 30_000 }),
      }),
    );
    const backlogOrders = Number(
      process.env.BENCH_EMAIL_BACKLOG_ORDERS ?? atScale(ctx.scale, { smoke: 500, small: 5_000, full: 20_000 }),
    );
    const deadlineMs = emailDefaults(ctx).deadlineMs;
    const backlog = await withHarness(ctx, 'email_backlog', provider, concurrency, (harness) =>
      deadlineBacklog(ctx, harness, provider, { orders: backlogOrders, spanMs: 6 * 3_600_000, deadlineMs }),
    );
    ctx.record({
      measure: `a 6-hour backlog of ${backlogOrders.toLocaleString('en-US')} orders meets the provider: sent or dead-lettered`,
      value: backlog.drainMs ?? Infinity,
      unit: 'ms',
      display: `${backlog.drainMs === undefined ? 'not within 600 s' : `${(backlog.drainMs / 1000).toFixed(1)} s`}; ${backlog.deadLettered} dead-lettered as deadline exceeded (${backlog.pastDeadlineAtStart} were past ${deadlineMs / 60_000} min), ${backlog.sent} sent; wrongly: ${backlog.deadLetteredYoung} dead-lettered young, ${backlog.sentOld} sent past the deadline`,
      target: 'past the deadline dead-lettered, the rest sent; 0 wrongly',
    });
    ctx.record({
      measure: `… then every dead letter redriven (${backlog.redriven})`,
      value: backlog.redriveMs ?? Infinity,
      unit: 'ms',
      display: `${backlog.redriveMs === undefined ? 'not within 300 s' : `${(backlog.redriveMs / 1000).toFixed(1)} s`}; ${backlog.doubled} doubled, ${backlog.lost} lost of ${backlog.orders}`,
      target: '0 doubled, 0 lost',
    });
    ctx.record({
      measure: `provider throttling (451 above 100/s) for ${throttleSeconds} s at 250 emails/s: backlog gone after the throttle ended`,
      value: throttle.backlogGoneMs ?? Infinity,
      unit: 'ms',
      display: `${throttle.backlogGoneMs === undefined ? 'not within 180 s' : `${(throttle.backlogGoneMs / 1000).toFixed(1)} s`}; ${throttle.deadLettered} dead-lettered, ${throttle.doubled} doubled, ${throttle.orders - throttle.accepted} lost of ${throttle.orders} (${throttle.refused} answers refused by the provider)`,
      target: '≤ 30 s; 0 dead-lettered, 0 doubled, 0 lost',
    });
  } finally {
    await provider.stop();
  }
}

export const emailScenario: Scenario = {
  name: 'email',
  description: 'the confirmation email against a 100 ms provider: latency, highest flat rate, a throttle at the peak',
  run,
};
