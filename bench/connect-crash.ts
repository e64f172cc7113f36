/**
 * Recovery: Kafka Connect killed with -9 during 1,000 events/s of open-loop load. The worker is
 * the bench's own (its own home, REST port, group and storage topics, through the launcher's
 * component), never the shared one. Measured from the moment its restart begins: until the first
 * record with a newer timestamp reaches the seat availability consumer (streaming again), and
 * until that consumer's commit → effect lag stays under 1 s for good.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep, waitFor } from '../lib/wait.js';
import { stackLayout } from '../stack/config.js';
import { connectComponent } from '../stack/connect.js';
import { type BenchContext, type Scenario } from './context.js';
import { atScale } from './scales.js';
import { type Written, startOpenLoopHarness } from './open-loop.js';
import { freePort } from '../stack/throwaway-postgres.js';
import { freshAtOf } from '../rehearsal/freshness.js';

const RATE = 1_000;

interface CrashFigures {
  firstStartS: number;
  streamingS: number;
  lagS: number;
  count: number;
}

/** One worker of the bench's own, one kill -9 under load, one restart; `pluginDiscovery` picks the old scan for the baseline. */
async function crashOnce(
  ctx: BenchContext,
  label: string,
  loadMs: number,
  pluginDiscovery?: 'hybrid_warn',
): Promise<CrashFigures> {
  const killAfterMs = Math.min(15_000, Math.round(loadMs / 3));
  const name = ctx.name(label);
  const home = mkdtempSync(join(tmpdir(), `stagefront-${name}-`));
  const port = await freePort();
  const shared = stackLayout();
  const layout = stackLayout({
    ...process.env,
    STACK_HOME: home,
    STACK_DIST: shared.dist,
    STACK_CONNECT_PORT: String(port),
    STACK_CONNECT_HEAP_MB: '384',
  });
  const storageTopicPrefix = `_${name}`;
  const worker = connectComponent(layout, {
    groupId: name,
    storageTopicPrefix,
    ...(pluginDiscovery === undefined ? {} : { pluginDiscovery }),
  });
  const launch = async () => {
    await worker.launch();
    await waitFor(async () => worker.pid() !== undefined && (await worker.healthy()), {
      timeoutMs: 240_000,
      intervalMs: 500,
      description: `the bench's Connect worker on port ${port} (log: ${worker.logFile})`,
    });
  };
  try {
    const firstStart = Date.now();
    await launch();
    const firstStartS = (Date.now() - firstStart) / 1000;
    const harness = await startOpenLoopHarness(ctx, label, { connectUrl: `http://127.0.0.1:${port}` });
    try {
      const written: Written = new Map();
      const load = harness.generate(RATE, loadMs, written);
      await sleep(killAfterMs);
      const pid = worker.pid();
      if (pid === undefined) throw new Error("the bench's Connect worker is not running");
      process.kill(pid, 'SIGKILL');
      await waitFor(() => worker.pid() === undefined, {
        timeoutMs: 30_000,
        intervalMs: 50,
        description: 'the killed worker to be gone',
      });
      const restartBegan = Date.now();
      await launch();
      const count = await load;
      const [seats] = harness.watched;
      if (seats === undefined) throw new Error('no seat availability consumer');
      const applied = () => [...written.keys()].filter((id) => seats.seen.get(id)?.done !== undefined).length;
      await waitFor(() => applied() >= count, {
        timeoutMs: 300_000,
        intervalMs: 500,
        description: `all ${count} seat events applied after the crash`,
      });
      const after = [...written].flatMap(([id, w]) => {
        const s = seats.seen.get(id);
        return s?.done === undefined ? [] : [{ appended: s.appended, done: s.done, lag: s.done - w.committed }];
      });
      const streaming = Math.min(...after.filter((e) => e.appended >= restartBegan).map((e) => e.appended));
      // Fresh again (rehearsal/freshness.ts): when the last event that took 1 s or more arrived.
      const lastSlow =
        freshAtOf(
          after.map((e) => ({ at: e.done, tookMs: e.lag })),
          restartBegan,
        ) ?? restartBegan;
      return {
        firstStartS,
        streamingS: (streaming - restartBegan) / 1000,
        lagS: Math.max(0, lastSlow - streaming) / 1000,
        count,
      };
    } finally {
      await harness.stop();
    }
  } finally {
    await worker.stop();
    const admin = ctx.kafka.admin();
    await admin.connect();
    const existing = new Set(await admin.listTopics());
    const ours = ['configs', 'offsets', 'status']
      .map((t) => `${storageTopicPrefix}-${t}`)
      .filter((t) => existing.has(t));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours }).catch(() => undefined);
    await admin.disconnect();
    rmSync(home, { recursive: true, force: true });
  }
}

async function run(ctx: BenchContext): Promise<void> {
  const loadMs =
    Number(process.env.BENCH_CRASH_SECONDS ?? atScale(ctx.scale, { smoke: 12, small: 45, full: 90 })) * 1000;
  // The baseline is the same drill with one setting changed: the smoke scale runs the drill once.
  const before = ctx.scale === 'smoke' ? undefined : await crashOnce(ctx, 'connect_scan', loadMs, 'hybrid_warn');
  const now = await crashOnce(ctx, 'connect', loadMs);
  const baseline = (pick: (figures: CrashFigures) => number) =>
    before === undefined ? {} : { baseline: { label: 'plugin.discovery=hybrid_warn', value: pick(before) } };
  ctx.record({
    measure: "the bench's Connect worker, first start until its REST API lists Debezium",
    value: now.firstStartS,
    unit: 's',
    ...baseline((f) => f.firstStartS),
  });
  ctx.record({
    measure: 'Connect killed with -9 at 1,000/s: restart begins → streaming again (first newer record timestamp)',
    value: now.streamingS,
    unit: 's',
    ...baseline((f) => f.streamingS),
    target: '≤ 15 s',
  });
  ctx.record({
    measure:
      'Connect killed with -9 at 1,000/s: streaming again → seat availability commit → effect lag < 1 s for good',
    value: now.lagS,
    unit: 's',
    ...baseline((f) => f.lagS),
    target: '≤ 10 s',
  });
  ctx.note(
    `connect crash: ${now.count.toLocaleString('en-US')} events over ${loadMs / 1000} s at ${RATE}/s, a Connect worker of the bench's own (384 MB heap) killed ${Math.min(15_000, Math.round(loadMs / 3)) / 1000} s in and started again at once; every seat event was applied afterwards. The baseline is the same drill first, on a worker that scans every plugin jar at start (plugin.discovery=hybrid_warn, Kafka's default).`,
  );
}

export const connectCrashScenario: Scenario = {
  name: 'connect-crash',
  description:
    "Kafka Connect (the bench's own worker) killed with -9 under 1,000/s: time to stream again and to lag < 1 s",
  run,
};
