/**
 * The highest rate whose lag stays flat: open-loop load at rising rates, each held for a window
 * (60 s; small: 20 s). A rate is flat when, for seat availability and the sales ledger, the median
 * scheduled → effect committed latency of the events due in the window's last 10 s is at most
 * 500 ms above that of the events due from second 5 to 15, and every effect commits within 60 s of
 * the last write. The search stops at the first rate that is not flat.
 */
import { waitFor } from '../lib/wait.js';
import { type BenchContext, type Scenario } from './context.js';
import { atScale } from './scales.js';
import { type OpenLoopHarness, type Written, startOpenLoopHarness } from './open-loop.js';
import { percentiles } from './report.js';

/** How far the late median lag may rise above the early one in a flat window. */
export const ALLOWED_RISE_MS = 500;

/** The median scheduled → done lag of the events due in [fromMs, toMs) that `seen` has done. */
export function medianLag(
  written: Written,
  seen: Map<string, { done?: number }>,
  fromMs: number,
  toMs: number,
): number {
  const lags = [...written].flatMap(([id, w]) => {
    const done = seen.get(id)?.done;
    return done === undefined || w.scheduled < fromMs || w.scheduled >= toMs ? [] : [Math.round(done - w.scheduled)];
  });
  return percentiles(lags).p50;
}

/** Rising rates on one harness until a window is not flat: the highest flat rate, and what each window showed. */
async function searchFlatRate(
  harness: OpenLoopHarness,
  rates: number[],
  windowMs: number,
): Promise<{ highest: number; tried: string[] }> {
  const tried: string[] = [];
  let highest = 0;
  for (const rate of rates) {
    const written: Written = new Map();
    const start = Date.now();
    const count = await harness.generate(rate, windowMs, written);
    const transactional = harness.watched.slice(0, 2);
    const expected = written.size; // every seat event and every order, once each
    const handled = () =>
      transactional.reduce(
        (n, w) => n + [...written.keys()].filter((id) => w.seen.get(id)?.done !== undefined).length,
        0,
      );
    const settled = await waitFor(() => handled() >= expected, {
      timeoutMs: 60_000,
      intervalMs: 500,
      description: `${rate}/s handled`,
    }).then(
      () => true,
      () => false,
    );
    const rises = transactional.map((w) => {
      const early = medianLag(written, w.seen, start + 5_000, start + 15_000);
      const late = medianLag(written, w.seen, start + windowMs - 10_000, start + windowMs);
      return { label: w.label, early, late };
    });
    const flat = settled && rises.every((r) => r.late <= r.early + ALLOWED_RISE_MS);
    tried.push(
      `${rate.toLocaleString('en-US')}/s ${flat ? 'flat' : 'not flat'} (${rises.map((r) => `${r.label} median lag ${r.early} → ${r.late} ms`).join(', ')}${settled ? '' : `; ${handled()} of ${expected} effects after 60 s`})`,
    );
    if (!flat) break;
    highest = rate;
    // let the next window start from an empty pipeline
    await waitFor(() => harness.done(written) >= harness.expected(written, count), {
      timeoutMs: 180_000,
      intervalMs: 500,
      description: 'emails caught up',
    }).catch(() => undefined);
  }
  return { highest, tried };
}

async function searchWith(
  ctx: BenchContext,
  consumers: 'runtime' | 'naive',
  rates: number[],
  windowMs: number,
): Promise<{ highest: number; tried: string[] }> {
  const harness = await startOpenLoopHarness(ctx, `flatlag_${consumers}`, { consumers });
  try {
    return await searchFlatRate(harness, rates, windowMs);
  } finally {
    await harness.stop();
  }
}

async function run(ctx: BenchContext): Promise<void> {
  const rates = (
    process.env.BENCH_FLAT_RATES ??
    atScale(ctx.scale, { smoke: '500', small: '1000,2000,3000', full: '1000,2000,3000,4000,6000' })
  )
    .split(',')
    .map(Number);
  const naiveRates = (
    process.env.BENCH_FLAT_NAIVE_RATES ??
    atScale(ctx.scale, { smoke: '250', small: '500,1000', full: '250,500,1000,2000' })
  )
    .split(',')
    .map(Number);
  const windowMs =
    Number(process.env.BENCH_FLAT_SECONDS ?? atScale(ctx.scale, { smoke: 4, small: 20, full: 60 })) * 1000;
  const naive = await searchWith(ctx, 'naive', naiveRates, windowMs);
  const runtime = await searchWith(ctx, 'runtime', rates, windowMs);
  ctx.record({
    measure: `highest rate with flat lag (seat availability and sales ledger, ${windowMs / 1000} s windows)`,
    value: runtime.highest,
    unit: 'events/s',
    baseline: { label: 'naive consumer', value: naive.highest },
    target: '≥ 3,000 events/s',
  });
  ctx.note(
    `flat-lag search, runtime: ${runtime.tried.join('; ')}. Naive consumer: ${naive.tried.join('; ')}. Flat means the median scheduled → effect latency of the window's last 10 s is within ${ALLOWED_RISE_MS} ms of seconds 5–15; the generator runs in the same node process as the consumers, so its own limit counts too.`,
  );
}

export const flatLagScenario: Scenario = {
  name: 'flat-lag',
  description: 'search for the highest rate whose lag stays flat',
  run,
};
