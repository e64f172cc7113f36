/**
 * The email bench's fault runs: the provider throttling at the peak, and a backlog of orders
 * hours old meeting it. Counts come from the provider's tally and the dead letter topic.
 */
import { readDeadLetters } from '../consumers/redrive/read-dead-letters.js';
import { redrive } from '../consumers/redrive/redrive.js';
import { waitFor } from '../lib/wait.js';
import type { BenchContext } from './context.js';
import { type EmailHarness, settle } from './email.js';
import type { Written } from './open-loop.js';
import type { ProviderProcess as Provider } from './provider/client.js';

interface ThrottleOutcome {
  orders: number;
  accepted: number;
  doubled: number;
  deadLettered: number;
  /** From the throttle's end until every order written before it was accepted; undefined: never within the wait. */
  backlogGoneMs: number | undefined;
  refused: number;
}

/** Records on `topic` (its end offsets, summed). */
async function recordsOn(ctx: BenchContext, topic: string): Promise<number> {
  const admin = ctx.kafka.admin();
  await admin.connect();
  try {
    if (!(await admin.listTopics()).includes(topic)) return 0;
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((n, o) => n + Number(o.high) - Number(o.low), 0);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Orders at `rate`/s (orders only) for the whole run; the provider throttles (451 above
 * `throttleRate`/s) from `leadMs` in, for `throttleMs`. Counts come from the provider and Kafka.
 */
export async function throttleRun(
  ctx: BenchContext,
  harness: EmailHarness,
  provider: Provider,
  plan: { rate: number; throttleRate: number; leadMs: number; throttleMs: number; tailMs: number },
): Promise<ThrottleOutcome> {
  await provider.reset();
  const written: Written = new Map();
  const generating = harness.generate(plan.rate, plan.leadMs + plan.throttleMs + plan.tailMs, written, true);
  await new Promise((resolve) => setTimeout(resolve, plan.leadMs));
  await provider.setThrottle(plan.throttleRate);
  await new Promise((resolve) => setTimeout(resolve, plan.throttleMs));
  await provider.setThrottle(undefined);
  const ended = Date.now();
  const before = [...written].filter(([, w]) => w.scheduled < ended).map(([id]) => id);
  const gone = await waitFor(() => before.every((id) => harness.seen.get(id)?.done !== undefined), {
    timeoutMs: 180_000,
    intervalMs: 100,
    description: 'the backlog accepted',
  }).then(
    () => Date.now() - ended,
    () => undefined,
  );
  const count = await generating;
  await settle(harness, written, count, 120_000);
  const stats = await provider.stats();
  const ids = new Set(await provider.messageIds());
  const accepted = [...written.keys()].filter((id) => ids.has(`${id}@events.stagefront`)).length;
  return {
    orders: count,
    accepted,
    doubled: stats.duplicates,
    deadLettered: await recordsOn(ctx, harness.dlqTopic),
    backlogGoneMs: gone,
    refused: Object.values(stats.refused).reduce((n, v) => n + v, 0),
  };
}

interface BacklogOutcome {
  orders: number;
  /** Orders past the deadline when the consumer met them: what should be dead-lettered (±those crossing it meanwhile). */
  pastDeadlineAtStart: number;
  deadLettered: number;
  /** Dead-lettered though younger than the deadline when dead-lettered, and sent though older: both must be 0. */
  deadLetteredYoung: number;
  sentOld: number;
  sent: number;
  drainMs: number | undefined;
  redriven: number;
  redriveMs: number | undefined;
  doubled: number;
  lost: number;
}

/**
 * A backlog of orders whose ce_times span `spanMs` meets the provider: those past the deadline are
 * dead-lettered (counted on the dead letter topic, each judged by its own headers), the others
 * sent, oldest first; then every dead letter is redriven and sent once.
 */
export async function deadlineBacklog(
  ctx: BenchContext,
  harness: EmailHarness,
  provider: Provider,
  plan: { orders: number; spanMs: number; deadlineMs: number },
): Promise<BacklogOutcome> {
  await provider.reset();
  const resumed = Date.now();
  const times = await harness.writeBacklog(plan.orders, plan.spanMs);
  const pastDeadlineAtStart = [...times.values()].filter((t) => resumed - t >= plan.deadlineMs).length;
  const settled = () =>
    readDeadLetters(ctx.kafka, harness.dlqTopic).then(
      (dead) => dead.length + [...times.keys()].filter((id) => harness.seen.get(id)?.done !== undefined).length,
    );
  const drainMs = await waitFor(async () => (await settled()) >= plan.orders, {
    timeoutMs: 600_000,
    intervalMs: 1_000,
    description: 'the backlog sent or dead-lettered',
  }).then(
    () => Date.now() - resumed,
    () => undefined,
  );
  const dead = await readDeadLetters(ctx.kafka, harness.dlqTopic);
  const deadLetteredYoung = dead.filter((d) => {
    const time = times.get(d.ceId ?? '');
    return time === undefined || Date.parse(d.deadLetteredAt ?? '') - time < plan.deadlineMs;
  }).length;
  const sentIds = [...times.keys()].filter((id) => harness.seen.get(id)?.done !== undefined);
  const sentOld = sentIds.filter((id) => (harness.seen.get(id)?.done ?? 0) - (times.get(id) ?? 0) >= plan.deadlineMs);
  const redriveStart = Date.now();
  const redriven = await redrive({
    kafka: ctx.kafka,
    pool: harness.pool,
    logger: ctx.logger,
    deadLetterTopic: harness.dlqTopic,
    selection: { reasons: ['deadline exceeded'] },
    apply: true,
    ratePerSecond: 5_000,
    redrivenBy: 'bench',
  });
  const expectedIds = new Set([...times.keys()].map((id) => `${id}@events.stagefront`));
  const acceptedAll = async () => (await provider.messageIds()).filter((id) => expectedIds.has(id));
  const redriveMs = await waitFor(async () => new Set(await acceptedAll()).size >= plan.orders, {
    timeoutMs: 300_000,
    intervalMs: 1_000,
    description: 'the redriven orders sent',
  }).then(
    () => Date.now() - redriveStart,
    () => undefined,
  );
  const accepted = await acceptedAll();
  return {
    orders: plan.orders,
    pastDeadlineAtStart,
    deadLettered: dead.length,
    deadLetteredYoung,
    sentOld: sentOld.length,
    sent: sentIds.length,
    drainMs,
    redriven: redriven.redriven.length,
    redriveMs,
    doubled: accepted.length - new Set(accepted).size,
    lost: plan.orders - new Set(accepted).size,
  };
}
