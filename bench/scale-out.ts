/**
 * Consumer scale-out: the same backlog of seat events drained by one, two and three instances of
 * the seat availability program (each a process of its own, as deployed) in one group on a topic
 * of 6 partitions, and by one instance consuming all 6 partitions at once. The records are made
 * once by the seat service's event writer and Debezium, then copied (key, value, headers) into a
 * fresh topic per round once the round's instances own all its partitions; the rate runs from
 * the first event in the inbox to the last. Meanwhile the CPU time of the instances,
 * Postgres, the Kafka broker and everything else is sampled from /proc, and what the instances'
 * database sessions are doing from pg_stat_activity, to show what limits the scaling here.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync } from 'node:fs';
import { topicFor } from '../events/catalogue.js';
import {
  type Admin,
  AssignerProtocol,
  type IHeaders,
  Partitioners,
  createProducer,
  ensureTopics,
} from '../lib/kafka.js';
import { runMigrations } from '../lib/migrations.js';
import { type Pool, createPool } from '../lib/postgres.js';
import { sleep, waitFor } from '../lib/wait.js';
import { CONSUMER_MIGRATIONS } from '../consumers/runtime/migrations.js';
import { compiledEntry, projectRoot } from '../lib/source-tree.js';
import { type BenchContext, type Scenario, freshDatabase } from './context.js';
import { atScale } from './scales.js';
import { startBenchSeatPipeline } from './seat-pipeline.js';
import { writeWorkload } from './workload.js';
import { freePort } from '../stack/throwaway-postgres.js';

const PARTITIONS = 6;
const WRITE_BATCH = 1_000;
const PRODUCE_BATCH = 500;
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

interface BacklogRecord {
  key: Buffer | null;
  value: Buffer | null;
  headers: IHeaders;
}

interface Round {
  label: string;
  instances: number;
  /** PARTITIONS_CONSUMED_CONCURRENTLY of each instance (the program's default is 3). */
  concurrency: number;
}

/** The Debezium topic read from the beginning until `count` records arrived. */
async function readBacklog(ctx: BenchContext, topic: string, count: number): Promise<BacklogRecord[]> {
  const consumer = ctx.kafka.consumer({
    groupId: ctx.name('scaleout_copy'),
    maxWaitTimeInMs: 100,
    allowAutoTopicCreation: false,
  });
  const records: BacklogRecord[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) records.push({ key: m.key, value: m.value, headers: m.headers ?? {} });
      },
    });
    await waitFor(() => records.length >= count, {
      timeoutMs: 900_000,
      intervalMs: 100,
      description: `${count} records on ${topic}`,
    });
    return records;
  } finally {
    await consumer.disconnect();
  }
}

/** CPU ticks used so far, per process group: the instances, Postgres, the Kafka broker, this process; and the machine's busy and I/O wait ticks. */
function cpuTicks(instances: ReadonlySet<number>): Map<string, number> {
  const ticks = new Map<string, number>();
  const add = (key: string, n: number) => ticks.set(key, (ticks.get(key) ?? 0) + n);
  const machine = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal
  add(
    'machine busy',
    (machine[0] ?? 0) +
      (machine[1] ?? 0) +
      (machine[2] ?? 0) +
      (machine[5] ?? 0) +
      (machine[6] ?? 0) +
      (machine[7] ?? 0),
  );
  add('machine iowait', machine[4] ?? 0);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const group = instances.has(pid)
        ? 'instances'
        : comm === 'postgres'
          ? 'postgres'
          : pid === process.pid
            ? 'bench'
            : comm === 'java' && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('kafka.Kafka')
              ? 'kafka'
              : undefined;
      if (group === undefined) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      add(`${group} ${pid}`, Number(fields[11]) + Number(fields[12])); // utime + stime
    } catch {
      // the process ended between the listing and the read
    }
  }
  return ticks;
}

/** Cores used per group between two samples (a process that ended in between is not counted; one that started counts whole). */
function coresUsed(before: Map<string, number>, after: Map<string, number>, seconds: number): Record<string, number> {
  const cores: Record<string, number> = { instances: 0, postgres: 0, kafka: 0, bench: 0 };
  for (const [key, n] of after) {
    const group = key.startsWith('machine') ? key : key.slice(0, key.lastIndexOf(' '));
    cores[group] = (cores[group] ?? 0) + (n - (before.get(key) ?? 0)) / TICKS_PER_SECOND / seconds;
  }
  const known = (cores.instances ?? 0) + (cores.postgres ?? 0) + (cores.kafka ?? 0) + (cores.bench ?? 0);
  cores.other = Math.max(0, (cores['machine busy'] ?? 0) - known);
  return cores;
}

/** What the instances' database sessions were doing, sampled: CPU in Postgres, waiting on WAL, waiting for the instance, idle. */
function sessionStates(pool: Pool, database: string): { stop: () => Promise<Record<string, number>> } {
  const counts: Record<string, number> = {};
  let running = true;
  const loop = (async () => {
    while (running) {
      const result = await pool
        .query<{ what: string }>(
          /* sql */ `
        select case when state = 'active' and wait_event is null then 'postgres cpu'
                    when state = 'active' then 'waits on ' || wait_event
                    when state = 'idle in transaction' then 'waits for the instance (in a transaction)'
                    else 'idle (no statement)' end as what
          from pg_stat_activity where datname = $1 and application_name = 'seat-availability'`,
          [database],
        )
        .catch(() => undefined);
      if (result === undefined) break; // the pool ended: the round is over
      for (const { what } of result.rows) counts[what] = (counts[what] ?? 0) + 1;
      await sleep(20);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const total = Object.values(counts).reduce((a, b) => a + b, 0) || 1;
      return Object.fromEntries(
        Object.entries(counts)
          .sort((a, b) => b[1] - a[1])
          .map(([what, n]) => [what, n / total]),
      );
    },
  };
}

/** Batches and the seconds spent in them, summed over the instances' /metrics; undefined while one does not answer. */
async function batchTotals(ports: readonly number[]): Promise<{ batches: number; seconds: number } | undefined> {
  let batches = 0;
  let seconds = 0;
  for (const port of ports) {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined);
    if (response?.ok !== true) return undefined;
    const text = await response.text();
    for (const line of text.split('\n')) {
      if (line.startsWith('consumer_batch_duration_seconds_count{'))
        batches += Number(line.slice(line.lastIndexOf(' ') + 1));
      if (line.startsWith('consumer_batch_duration_seconds_sum{'))
        seconds += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return { batches, seconds };
}

/** The group is stable and its `members` members each own some of the topic's partitions, all of them in all. */
async function groupReady(admin: Admin, groupId: string, topic: string, members: number): Promise<boolean> {
  const group = (await admin.describeGroups([groupId])).groups[0];
  if (group?.state !== 'Stable' || group.members.length !== members) return false;
  const owned = group.members.map((m) =>
    m.memberAssignment.length === 0
      ? 0
      : (AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment[topic] ?? []).length,
  );
  return owned.every((n) => n > 0) && owned.reduce((a, b) => a + b, 0) === PARTITIONS;
}

/** Produces the backlog onto `topic`: each partition's records in their order, the partitions in parallel. */
async function produce(ctx: BenchContext, topic: string, backlog: readonly BacklogRecord[]): Promise<void> {
  const partitionOf = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: PARTITIONS }, (_, partitionId) => ({
    partitionId,
    leader: 0,
    partitionErrorCode: 0,
    replicas: [0],
    isr: [0],
  }));
  const byPartition = new Map<number, BacklogRecord[]>();
  for (const record of backlog) {
    const partition = partitionOf({ topic, partitionMetadata, message: { key: record.key, value: record.value } });
    const records = byPartition.get(partition) ?? [];
    records.push(record);
    byPartition.set(partition, records);
  }
  const producer = createProducer(ctx.kafka, { allowAutoTopicCreation: false });
  await producer.connect();
  try {
    await Promise.all(
      [...byPartition].map(async ([partition, records]) => {
        for (let from = 0; from < records.length; from += PRODUCE_BATCH) {
          await producer.send({
            topic,
            acks: -1,
            messages: records.slice(from, from + PRODUCE_BATCH).map((r) => ({ ...r, partition })),
          });
        }
      }),
    );
  } finally {
    await producer.disconnect();
  }
}

interface DrainResult {
  rate: number;
  /** How fast the backlog went onto the topic (the drain cannot be faster). */
  produceRate: number;
  /** Events already applied when the last record was on the topic: near all of them, and the drain only followed the producer. */
  appliedWhenProduced: number;
  cores: Record<string, number>;
  sessions: Record<string, number>;
  batches: { batches: number; seconds: number };
}

async function drain(ctx: BenchContext, backlog: readonly BacklogRecord[], round: Round): Promise<DrainResult> {
  const prefix = ctx.name(`scaleout_${round.label}`);
  const topic = topicFor(prefix, 'seat');
  const admin = ctx.kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [{ topic, numPartitions: PARTITIONS }]);
  const database = await freshDatabase(ctx, `scaleout_${round.label}`);
  const pool = createPool({
    connectionString: database.url,
    applicationName: 'bench-scaleout',
    logger: ctx.logger,
    max: 2,
  });
  const children: ChildProcess[] = [];
  try {
    await runMigrations({ pool, folder: CONSUMER_MIGRATIONS });
    const ports: number[] = [];
    for (let i = 0; i < round.instances; i += 1) {
      const port = await freePort();
      ports.push(port);
      const env = {
        ...process.env,
        ...ctx.kafkaEnv,
        CONSUMER_DATABASE_URL: database.url,
        KAFKA_BROKERS: ctx.stack.kafkaBrokers.join(','),
        SCHEMA_REGISTRY_URL: ctx.stack.registryUrl,
        TOPIC_PREFIX: prefix,
        CONSUMER_GROUP_ID: prefix,
        METRICS_PORT: String(port),
        LOG_LEVEL: 'warn',
        PARTITIONS_CONSUMED_CONCURRENTLY: String(round.concurrency),
      };
      children.push(
        spawn(process.execPath, ['--enable-source-maps', compiledEntry('consumers/seat-availability/main.ts')], {
          cwd: projectRoot,
          env,
          stdio: ['ignore', 'ignore', 'inherit'],
        }),
      );
    }
    // The instances join an empty topic; once the group has settled with all of them, the
    // backlog is produced at once (each partition's records in order, partitions in parallel)
    // and the clock starts.
    await waitFor(() => groupReady(admin, prefix, topic, round.instances), {
      timeoutMs: 120_000,
      intervalMs: 100,
      description: `${round.instances} instances owning all ${PARTITIONS} partitions`,
    });
    await waitFor(async () => (await batchTotals(ports)) !== undefined, {
      timeoutMs: 30_000,
      intervalMs: 100,
      description: 'the instances serving /metrics',
    });
    const applied = async (): Promise<number> =>
      (await pool.query<{ n: number }>('select count(*)::int as n from inbox')).rows[0]?.n ?? 0;
    const pids = new Set(children.map((c) => c.pid ?? -1));
    const batchesBefore = (await batchTotals(ports)) ?? { batches: 0, seconds: 0 };
    const sessions = sessionStates(pool, database.name);
    const started = performance.now();
    let produceError: unknown;
    let appliedWhenProduced = 0;
    const producing = produce(ctx, topic, backlog).then(
      async () => {
        const at = performance.now();
        appliedWhenProduced = await applied();
        return at;
      },
      (err: unknown) => {
        produceError = err;
        return Number.NaN;
      },
    );
    // The clock runs from the first event in the inbox to the last: the time the records take to
    // reach the topic before the first fetch is the producer's, not the instances'.
    let first = 0;
    let cpuBefore = cpuTicks(pids);
    for (;;) {
      if (produceError !== undefined) throw produceError;
      const n = await applied();
      if (n > 0 && first === 0) {
        first = performance.now();
        cpuBefore = cpuTicks(pids);
      }
      if (n >= backlog.length) break;
      if (performance.now() - started > 1_800_000)
        throw new Error(`${n} of ${backlog.length} events applied after 30 minutes`);
      await sleep(50);
    }
    const produced = await producing;
    const seconds = (performance.now() - first) / 1000;
    const cpuAfter = cpuTicks(pids);
    const batchesAfter = (await batchTotals(ports)) ?? batchesBefore;
    return {
      rate: backlog.length / seconds,
      produceRate: backlog.length / ((produced - started) / 1000),
      appliedWhenProduced,
      cores: coresUsed(cpuBefore, cpuAfter, seconds),
      sessions: await sessions.stop(),
      batches: {
        batches: batchesAfter.batches - batchesBefore.batches,
        seconds: batchesAfter.seconds - batchesBefore.seconds,
      },
    };
  } finally {
    for (const child of children) {
      child.kill('SIGTERM');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    }
    await pool.end();
    await database.drop();
    await admin.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => undefined);
    await admin.deleteGroups([prefix]).catch(() => undefined);
    await admin.disconnect();
  }
}

function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** One line of where the time went in a round. */
function whereTheTimeWent(result: DrainResult): string {
  const { cores, sessions, batches } = result;
  const groups = ['instances', 'postgres', 'kafka', 'bench', 'other']
    .map((group) => `${group} ${(cores[group] ?? 0).toFixed(2)}`)
    .join(', ');
  const states = Object.entries(sessions)
    .map(([what, share]) => `${what} ${percent(share)}`)
    .join(', ');
  const perBatch =
    batches.batches === 0
      ? ''
      : `; ${batches.batches} partition batches, ${Math.round((batches.seconds / batches.batches) * 1000)} ms each on average`;
  return `machine ${(cores['machine busy'] ?? 0).toFixed(2)} of 2 cores busy (I/O wait ${(cores['machine iowait'] ?? 0).toFixed(2)}): ${groups}; the instances' database sessions: ${states}${perBatch}`;
}

async function run(ctx: BenchContext): Promise<void> {
  const count = Number(
    process.env.BENCH_SCALE_OUT_EVENTS ?? atScale(ctx.scale, { smoke: 1_000, small: 10_000, full: 60_000 }),
  );
  const pipeline = await startBenchSeatPipeline(ctx, 'scaleout');
  let backlog: BacklogRecord[];
  try {
    const seats = Math.ceil(count / 4);
    for (let from = 0; from < count; from += WRITE_BATCH)
      await writeWorkload(pipeline.service, { from, count: Math.min(WRITE_BATCH, count - from), seats });
    backlog = await readBacklog(ctx, pipeline.topics.seat, count);
  } finally {
    await pipeline.teardown();
    const admin = ctx.kafka.admin();
    await admin.connect();
    await admin.deleteGroups([ctx.name('scaleout_copy')]).catch(() => undefined);
    await admin.disconnect();
  }
  const allRounds: Round[] = [
    { label: '1', instances: 1, concurrency: 3 },
    { label: '2', instances: 2, concurrency: 3 },
    { label: '3', instances: 3, concurrency: 3 },
    { label: '1x6', instances: 1, concurrency: 6 },
  ];
  // The smoke scale, whose figures mean nothing, runs one instance and two: every code path.
  const rounds = ctx.scale === 'smoke' ? allRounds.slice(0, 2) : allRounds;
  const results = new Map<string, Awaited<ReturnType<typeof drain>>>();
  for (const round of rounds) {
    const result = await drain(ctx, backlog, round);
    results.set(round.label, result);
    ctx.note(
      `scale-out, ${round.instances} instance${round.instances > 1 ? 's' : ''} × ${round.concurrency} partitions concurrently: ${Math.round(result.rate).toLocaleString('en-US')} events/s (the backlog produced at ${Math.round(result.produceRate).toLocaleString('en-US')}/s, ${percent(result.appliedWhenProduced / backlog.length)} applied when its last record was on the topic); ${whereTheTimeWent(result)}`,
    );
  }
  const one = results.get('1')?.rate ?? 0;
  const measure = (label: string, text: string, target?: string) => {
    const value = results.get(label)?.rate;
    if (value === undefined) return;
    ctx.record({
      measure: `seat availability backlog drain, ${count.toLocaleString('en-US')} events, 6 partitions: ${text}`,
      value,
      unit: 'events/s',
      ...(label === '1' ? {} : { baseline: { label: '1 instance', value: one } }),
      ...(target ? { target } : {}),
    });
  };
  measure('1', '1 instance');
  measure('2', '2 instances');
  measure('3', '3 instances', 'rises with instances while CPU is free');
  measure('1x6', '1 instance, 6 partitions concurrently');
  ctx.note(
    'scale-out: each instance is `consumers/seat-availability/main.ts` as its own process with the default PARTITIONS_CONSUMED_CONCURRENTLY=3 (at the small and full scales the last row: one instance at 6); the instances join an empty topic; once the group is stable with every instance owning partitions, the backlog is produced (partitions in parallel), and the rate runs from the first event in the inbox to the last (polled every 50 ms). Cores are CPU seconds per second of that window from /proc: instances, postgres (every backend of the shared cluster), kafka (the broker), bench (this process, which produces the backlog during the window and competes for the same cores), other (the rest of the machine, other work included). Session states are pg_stat_activity of the connections of the instances, sampled every 20 ms.',
  );
}

export const scaleOutScenario: Scenario = {
  name: 'scale-out',
  description:
    'the same backlog drained by 1, 2 and 3 seat availability instances on 6 partitions, with the CPU used per process group',
  run,
};
