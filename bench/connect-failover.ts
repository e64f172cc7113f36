/**
 * Failover: the Connect worker that runs the outbox task killed with -9 under open-loop load, in a
 * cluster of two workers (the other takes the task over, nothing is restarted) against a cluster
 * of one (the worker is started again at once, as connect-crash does). The workers are the
 * bench's own (own homes, REST ports, one group and storage topics per cluster, through the
 * launcher's component), never the shared ones. Both are measured from the kill: until the first
 * record with a newer timestamp reaches the seat availability consumer (streaming again), and until
 * that consumer's commit → effect lag stays under 1 s for good.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectorStatus } from '../connectors/connect-client.js';
import type { Component } from '../stack/component.js';
import { sleep, waitFor } from '../lib/wait.js';
import { localConnectApi, stackLayout } from '../stack/config.js';
import { type ConnectCluster, connectComponent } from '../stack/connect.js';
import { type BenchContext, type Scenario } from './context.js';
import { atScale } from './scales.js';
import { type Written, startOpenLoopHarness } from './open-loop.js';
import { freePort } from '../stack/throwaway-postgres.js';
import { freshAtOf } from '../rehearsal/freshness.js';

/** When the worker is killed: 15 s into the load, or a third of it when it is shorter (the smoke scale). */
const killAfterMs = (loadMs: number): number => Math.min(15_000, Math.round(loadMs / 3));

interface BenchWorker {
  component: Component;
  url: string;
  /** As Connect names it in a status's worker_id. */
  workerId: string;
  launch(): Promise<void>;
}

/** `count` workers of one Connect cluster of the bench's own, started at once; `remove` stops them and deletes what they left. */
async function startBenchCluster(
  ctx: BenchContext,
  label: string,
  count: number,
): Promise<{ workers: BenchWorker[]; connectUrl: string; remove: () => Promise<void> }> {
  const name = ctx.name(label);
  const cluster: ConnectCluster = { groupId: name, storageTopicPrefix: `_${name}` };
  const shared = stackLayout();
  const homes: string[] = [];
  const workers: BenchWorker[] = [];
  for (let i = 0; i < count; i += 1) {
    const home = mkdtempSync(join(tmpdir(), `stagefront-${name}-${i + 1}-`));
    homes.push(home);
    const port = await freePort();
    const layout = stackLayout({
      ...process.env,
      STACK_HOME: home,
      STACK_DIST: shared.dist,
      STACK_CONNECT_PORT: String(port),
      STACK_CONNECT_HEAP_MB: '384',
    });
    const component = connectComponent(layout, cluster);
    const launch = async () => {
      await component.launch();
      await waitFor(async () => component.pid() !== undefined && (await component.healthy()), {
        timeoutMs: 240_000,
        intervalMs: 500,
        description: `the bench's Connect worker on port ${port} (log: ${component.logFile})`,
      });
    };
    workers.push({ component, url: `http://127.0.0.1:${port}`, workerId: `127.0.0.1:${port}`, launch });
  }
  const remove = async () => {
    for (const worker of workers) await worker.component.stop();
    const admin = ctx.kafka.admin();
    await admin.connect();
    const existing = new Set(await admin.listTopics());
    const ours = ['configs', 'offsets', 'status']
      .map((t) => `${cluster.storageTopicPrefix}-${t}`)
      .filter((t) => existing.has(t));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours }).catch(() => undefined);
    await admin.disconnect();
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  };
  try {
    await Promise.all(workers.map((w) => w.launch()));
  } catch (error) {
    await remove();
    throw error;
  }
  return { workers, connectUrl: workers.map((w) => w.url).join(','), remove };
}

interface FailoverFigures {
  streamingS: number;
  lagS: number;
  count: number;
}

/** One kill -9 of the worker that runs the task, under `rate` events/s; with one worker it is started again at once. */
async function killTaskWorker(
  ctx: BenchContext,
  label: string,
  workers: number,
  rate: number,
  loadMs: number,
): Promise<FailoverFigures> {
  const cluster = await startBenchCluster(ctx, label, workers);
  try {
    const harness = await startOpenLoopHarness(ctx, label, { connectUrl: cluster.connectUrl });
    try {
      const written: Written = new Map();
      const load = harness.generate(rate, loadMs, written);
      await sleep(killAfterMs(loadMs));
      const status = await connectorStatus(localConnectApi(cluster.connectUrl), ctx.name(label));
      const runningOn = status?.tasks[0]?.worker_id;
      const victim = cluster.workers.find((w) => w.workerId === runningOn);
      const pid = victim?.component.pid();
      if (victim === undefined || pid === undefined)
        throw new Error(`the task runs on ${runningOn ?? 'no worker'}, not on a running worker of the bench's cluster`);
      const killedAt = Date.now();
      process.kill(pid, 'SIGKILL');
      await waitFor(() => victim.component.pid() === undefined, {
        timeoutMs: 30_000,
        intervalMs: 50,
        description: 'the killed worker to be gone',
      });
      if (workers === 1) await victim.launch();
      const count = await load;
      const [seats] = harness.watched;
      if (seats === undefined) throw new Error('no seat availability consumer');
      const applied = () => [...written.keys()].filter((id) => seats.seen.get(id)?.done !== undefined).length;
      await waitFor(() => applied() >= count, {
        timeoutMs: 300_000,
        intervalMs: 500,
        description: `all ${count} seat events applied after the kill`,
      });
      const after = [...written].flatMap(([id, w]) => {
        const s = seats.seen.get(id);
        return s?.done === undefined ? [] : [{ appended: s.appended, done: s.done, lag: s.done - w.committed }];
      });
      // A killed producer stamps nothing more: the first newer record timestamp is the new task's.
      const streaming = Math.min(...after.filter((e) => e.appended >= killedAt).map((e) => e.appended));
      // Fresh again (rehearsal/freshness.ts): when the last event that took 1 s or more arrived.
      const lastSlow =
        freshAtOf(
          after.map((e) => ({ at: e.done, tookMs: e.lag })),
          killedAt,
        ) ?? killedAt;
      return { streamingS: (streaming - killedAt) / 1000, lagS: Math.max(0, lastSlow - streaming) / 1000, count };
    } finally {
      await harness.stop();
    }
  } finally {
    await cluster.remove();
  }
}

/** Runs both and waits for both to end (a failed one does not leave the other running): the first failure is thrown. */
async function bothAtOnce<T>(a: () => Promise<T>, b: () => Promise<T>): Promise<[T, T]> {
  const [first, second] = await Promise.allSettled([a(), b()]);
  if (first.status === 'rejected') throw first.reason;
  if (second.status === 'rejected') throw second.reason;
  return [first.value, second.value];
}

async function run(ctx: BenchContext): Promise<void> {
  const rate = Number(process.env.BENCH_FAILOVER_RATE ?? atScale(ctx.scale, { smoke: 100, small: 250, full: 1_000 }));
  const loadMs =
    Number(process.env.BENCH_FAILOVER_SECONDS ?? atScale(ctx.scale, { smoke: 12, small: 40, full: 90 })) * 1000;
  const one = () => killTaskWorker(ctx, 'failover_one', 1, rate, loadMs);
  const two = () => killTaskWorker(ctx, 'failover_two', 2, rate, loadMs);
  // One after the other, each with the machine to itself; at the smoke scale, whose figures mean
  // nothing, both at once (each cluster, harness and load is its own): the same code in half the time.
  const [single, pair] = ctx.scale === 'smoke' ? await bothAtOnce(one, two) : [await one(), await two()];
  const baseline = (value: number) => ({ label: 'one worker, restarted at once', value });
  const at = `${rate.toLocaleString('en-US')}/s`;
  ctx.record({
    measure: `worker running the outbox task killed with -9 at ${at}: kill → streaming again, two workers`,
    value: pair.streamingS,
    unit: 's',
    baseline: baseline(single.streamingS),
  });
  ctx.record({
    measure: `worker running the outbox task killed with -9 at ${at}: streaming again → seat availability lag < 1 s for good, two workers`,
    value: pair.lagS,
    unit: 's',
    baseline: baseline(single.lagS),
  });
  ctx.note(
    `connect failover: ${pair.count.toLocaleString('en-US')} events (one worker: ${single.count.toLocaleString('en-US')}) over ${loadMs / 1000} s at ${at}; Connect clusters of the bench's own (384 MB heap per worker), ` +
      `the worker running the task killed ${killAfterMs(loadMs) / 1000} s in. Two workers: the other takes the task over when the group coordinator drops the dead member (Connect's session timeout) and rebalances; ` +
      'one worker: started again at once. Every seat event was applied afterwards in both.',
  );
}

export const connectFailoverScenario: Scenario = {
  name: 'connect-failover',
  description:
    'the Connect worker running the outbox task killed with -9: time to stream again with two workers against one',
  run,
};
