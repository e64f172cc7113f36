/**
 * Fault drills for the consumer runtime: a consumer of `counted` events running as its own
 * least-privileged role in a fresh database, fed by an open-loop load, its metrics served over
 * HTTP and watched for the failure alert's series. After the fault a drill checks the outcome:
 * every event applied exactly once, per-key order kept, nothing dead-lettered.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { expect } from 'vitest';
import { deadLetterTopicFor } from '../../../events/catalogue.js';
import type { Kafka, Producer } from '../../../lib/kafka.js';
import { createMetricsRegistry, serveHttp } from '../../../lib/metrics.js';
import { runMigrations } from '../../../lib/migrations.js';
import { type Pool, createPool } from '../../../lib/postgres.js';
import type { Registry } from '../../../lib/schema-registry.js';
import { sleep, waitFor } from '../../../lib/wait.js';
import { type DeadLetter, readDeadLetters } from '../../../consumers/redrive/read-dead-letters.js';
import { RuntimeEvents } from '../../../consumers/runtime/lifecycle.js';
import { registerConsumerMetrics } from '../../../consumers/runtime/metrics.js';
import { CONSUMER_MIGRATIONS } from '../../../consumers/runtime/migrations.js';
import { ensureConsumerRole } from '../../../consumers/runtime/consumer-role.js';
import type { ConsumerDefinition, DeliveryPolicy } from '../../../consumers/runtime/types.js';
import { type CloudEventRecord, cloudEventMessage, registerTestSchema } from '../../support/cloudevent-records.js';
import { track } from '../../support/leak-guard.js';
import { type StackEndpoints, adminQuery, uniqueName } from '../../support/stack.js';
import { waitForCommittedToEnd } from './group-members.js';
import type { Delivery } from './redelivery.js';
import {
  COUNTED_TYPE,
  type CountedOptions,
  type CountedPayload,
  appliedRows,
  assertKeyOrder,
  countedConsumer,
  countedSchemaV1,
  createAppliedEventsTable,
} from './counted-events.js';
import {
  connectedProducer,
  createTopics,
  startTrackedConsumer,
  testKafka,
  testLogger,
  testRegistry,
} from './stack-fixture.js';

/** A database owned by a role of its own (no superuser), on the cluster behind `adminUrl`. */
export interface RoleDatabase {
  name: string;
  role: string;
  /** The consumer's connection: the role, not the superuser. */
  roleUrl: string;
  /** Runs SQL as the superuser in this database. */
  admin(sql: string, params?: unknown[]): Promise<pg.QueryResult>;
  /** Ends the role's sessions, so session settings changed with ALTER take effect. */
  dropSessions(): Promise<void>;
  drop(): Promise<void>;
}

export async function createRoleDatabase(adminUrl: string, prefix: string): Promise<RoleDatabase> {
  const name = uniqueName(prefix).toLowerCase();
  const role = `${name}_consumer`;
  const password = randomBytes(12).toString('hex');
  await adminQuery(adminUrl, `create database ${pg.escapeIdentifier(name)}`);
  const dbAdminUrl = adminUrl.replace(/\/[^/]*$/, `/${name}`);
  const admin = new pg.Client({ connectionString: dbAdminUrl });
  await admin.connect();
  try {
    await ensureConsumerRole(admin, { role, password });
  } finally {
    await admin.end();
  }
  const url = new URL(dbAdminUrl);
  url.username = role;
  url.password = password;
  const dropSessions = async () => {
    await adminQuery(adminUrl, 'select pg_terminate_backend(pid) from pg_stat_activity where usename = $1', [role]);
  };
  return {
    name,
    role,
    roleUrl: url.toString(),
    admin: (sql, params = []) => adminQuery(dbAdminUrl, sql, params),
    dropSessions,
    drop: async () => {
      await adminQuery(adminUrl, `drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
      await adminQuery(adminUrl, `drop role if exists ${pg.escapeIdentifier(role)}`);
    },
  };
}

/** The runtime's failure-alert series, served over HTTP as Prometheus would scrape them. */
export interface FailureSeries {
  metricsUrl: string;
  /** Failure codes of the `consumer_failing_event_age_seconds` series now exposed. */
  failingCodes(): Promise<string[]>;
  /** True while some series of `consumer_failing_past_deadline` is 1. */
  pastDeadline(): Promise<boolean>;
  /**
   * What ConsumerBacklogAging compares: the oldest waiting event's age over the partitions
   * (undefined while none waits), and the consumer's deadline.
   */
  backlog(): Promise<{ oldestWaitingSeconds: number | undefined; deadlineSeconds: number | undefined }>;
  close(): Promise<void>;
}

export async function serveFailureSeries(
  consumer: string,
  events: RuntimeEvents,
  deadlineMs = 60_000,
): Promise<FailureSeries> {
  const metrics = createMetricsRegistry(consumer);
  registerConsumerMetrics(metrics, consumer, events, deadlineMs);
  const http = await serveHttp({ registry: metrics, port: 0 });
  const close = track('drill metrics endpoint', () => http.close());
  const scrape = async () => (await fetch(`${http.url}/metrics`)).text();
  return {
    metricsUrl: `${http.url}/metrics`,
    failingCodes: async () =>
      seriesOf(await scrape(), 'consumer_failing_event_age_seconds').map((s) => s.labels.error ?? ''),
    pastDeadline: async () => seriesOf(await scrape(), 'consumer_failing_past_deadline').some((s) => s.value === 1),
    backlog: async () => {
      const text = await scrape();
      const ages = seriesOf(text, 'consumer_oldest_waiting_event_age_seconds').map((s) => s.value);
      return {
        oldestWaitingSeconds: ages.length === 0 ? undefined : Math.max(...ages),
        deadlineSeconds: seriesOf(text, 'consumer_event_deadline_seconds')[0]?.value,
      };
    },
    close,
  };
}

export interface DrillOptions {
  stack: StackEndpoints;
  prefix: string;
  policy: DeliveryPolicy;
  counted?: CountedOptions;
  /** The cluster of the consumer database; default the stack's. */
  adminUrl?: string;
  partitions?: number;
  /** The consumer's pool: reached through `through` (a proxy), with a query timeout. */
  pool?: { through?: (url: string) => string; queryTimeoutMs?: number };
}

export interface Drill extends Omit<FailureSeries, 'close'> {
  name: string;
  topic: string;
  kafka: Kafka;
  registry: Registry;
  producer: Producer;
  db: RoleDatabase;
  /** The role's pool: what the consumer uses; also for reading the outcome. */
  pool: Pool;
  schemaId: number;
  events: RuntimeEvents;
  definition: ConsumerDefinition;
  policy: DeliveryPolicy;
  /** `count` events over ten keys, each key's sequence numbers after those already made. */
  nextEvents(count: number, options?: { time?: Date; behaviour?: CountedPayload['behaviour'] }): CloudEventRecord[];
  /** Sends `records` spread over `durationMs` without waiting for the pipeline; resolves when all are sent. */
  load(records: readonly CloudEventRecord[], durationMs: number): Promise<string[]>;
  /** Starts a member of the drill's consumer group and waits until it has joined. */
  startConsumer(): Promise<{ close: () => Promise<void>; isReady: () => boolean }>;
  /** Every record handed to a member started by startConsumer (its decoder parsed it), in order: redeliveries included. */
  deliveries: readonly Delivery[];
  deadLetters(): Promise<DeadLetter[]>;
  /**
   * Waits until every id is applied and the group has committed the topic to its end (nothing left
   * to deliver again); then asserts exactly once, key order, and `deadLetters` dead letters (default none).
   */
  expectAllAppliedOnce(ids: readonly string[], deadLetters?: number): Promise<void>;
  close(): Promise<void>;
}

const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9'];

function seriesOf(text: string, metric: string): { labels: Record<string, string>; value: number }[] {
  const series: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`)) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    series.push({ labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)) });
  }
  return series;
}

export async function startDrill(options: DrillOptions): Promise<Drill> {
  const { stack, prefix, policy } = options;
  const name = uniqueName(prefix);
  const topic = `${name}.seat`;
  const kafka = testKafka(stack, name);
  const registry = testRegistry(stack);
  await createTopics(kafka, [topic], options.partitions ?? 3);
  const db = await createRoleDatabase(options.adminUrl ?? stack.postgresAdminUrl, prefix);
  const pool = createPool({
    connectionString: options.pool?.through?.(db.roleUrl) ?? db.roleUrl,
    applicationName: name,
    logger: testLogger('pool'),
    max: 5,
    connectionTimeoutMs: 2_000,
    ...(options.pool?.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: options.pool.queryTimeoutMs }),
  });
  const closePool = track(`drill database ${db.name}`, async () => {
    await pool.end();
    await db.drop();
  });
  await runMigrations({ pool, folder: CONSUMER_MIGRATIONS });
  await createAppliedEventsTable(pool);
  const schemaId = await registerTestSchema(registry, `${name}.Counted`, countedSchemaV1(name));
  const { producer, close: closeProducer } = await connectedProducer(kafka);
  const events = new RuntimeEvents();
  const definition = countedConsumer(name, [topic], options.counted);
  const series = await serveFailureSeries(name, events);
  const seqs = new Map<string, number>();
  const consumers: { close: () => Promise<void> }[] = [];
  const deliveries: Delivery[] = [];
  /** The drill's definition for the n-th member: the same handler, its deliveries recorded. */
  const memberDefinition = (member: number): ConsumerDefinition => {
    const spec = definition.eventTypes[COUNTED_TYPE]!;
    const parse = (payload: unknown) => {
      const parsed = spec.parse(payload) as CountedPayload;
      deliveries.push({ member, key: parsed.key, seq: parsed.seq });
      return parsed;
    };
    return { ...definition, eventTypes: { ...definition.eventTypes, [COUNTED_TYPE]: { ...spec, parse } } };
  };

  const drill: Drill = {
    name,
    topic,
    kafka,
    registry,
    producer,
    db,
    pool,
    schemaId,
    events,
    definition,
    policy,
    metricsUrl: series.metricsUrl,
    failingCodes: series.failingCodes,
    pastDeadline: series.pastDeadline,
    backlog: series.backlog,
    nextEvents: (count, { time, behaviour = 'apply' } = {}) =>
      Array.from({ length: count }, (_, index) => {
        const key = KEYS[index % KEYS.length]!;
        const seq = (seqs.get(key) ?? 0) + 1;
        seqs.set(key, seq);
        return {
          type: COUNTED_TYPE,
          key,
          schemaId,
          payload: { key, seq, behaviour },
          ...(time ? { time: time.toISOString() } : {}),
        };
      }),
    load: async (records, durationMs) => {
      const messages = await Promise.all(records.map((record) => cloudEventMessage(registry, record)));
      const ticks = Math.max(1, Math.min(messages.length, Math.ceil(durationMs / 100)));
      const perTick = Math.ceil(messages.length / ticks);
      const interval = durationMs / ticks;
      const started = Date.now();
      for (let tick = 0; tick * perTick < messages.length; tick += 1) {
        // Open loop: each tick is sent on schedule whatever the consumer is doing (one send at a
        // time, so Kafka keeps the per-key order of the load).
        await sleep(Math.max(0, started + tick * interval - Date.now()));
        await producer.send({ topic, acks: -1, messages: messages.slice(tick * perTick, (tick + 1) * perTick) });
      }
      return messages.map((m) => String(m.headers.ce_id));
    },
    startConsumer: async () => {
      const running = await startTrackedConsumer({
        definition: memberDefinition(consumers.length),
        kafka,
        groupId: name,
        registry,
        pool,
        logger: testLogger(name),
        policy,
        events,
        sessionTimeoutMs: 6_000,
      });
      consumers.push(running);
      await waitFor(() => running.isReady(), { timeoutMs: 60_000, description: `${name} joined its group` });
      return running;
    },
    deliveries,
    deadLetters: () => readDeadLetters(kafka, deadLetterTopicFor(topic)),
    expectAllAppliedOnce: async (ids, deadLetters = 0) => {
      await waitFor(async () => (await appliedRows(pool, name)).length >= ids.length, {
        timeoutMs: 120_000,
        description: `all ${ids.length} events applied`,
      });
      // Counted only once nothing can come again: a duplicate applied late is seen.
      await waitForCommittedToEnd(kafka, name, [topic]);
      const rows = await appliedRows(pool, name);
      expect(rows.length).toBe(ids.length);
      expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set(ids));
      assertKeyOrder(rows);
      expect((await drill.deadLetters()).length).toBe(deadLetters);
    },
    close: async () => {
      for (const running of consumers) await running.close();
      await Promise.all([closeProducer(), closePool(), series.close()]);
    },
  };
  return drill;
}

/**
 * Counts the infrastructure retries of each partition of `topic` from now until `stop`, which
 * returns the most any one partition made: a record there was tried that many times and more.
 */
export function countInfrastructureRetries(events: RuntimeEvents, topic: string): { stop(): number } {
  const perPartition = new Map<number, number>();
  const onRetry = (retry: { topic: string; partition: number; kind: string }) => {
    if (retry.topic === topic && retry.kind === 'infrastructure')
      perPartition.set(retry.partition, (perPartition.get(retry.partition) ?? 0) + 1);
  };
  const off = events.on('retry', onRetry);
  return {
    stop: () => {
      off();
      return Math.max(0, ...perPartition.values());
    },
  };
}

/**
 * Runs `fault` for `holdMs` while load arrives, then `repair`; checks the failure series with
 * `expectedCode` was raised during the fault and is gone after, that the fault lasted more tries
 * than the policy's delivery limit on some partition (so "nothing dead-lettered" says the limit was
 * not counted against its records, not that too few tries were made), and that every event applied once.
 */
export async function runFaultDrill(
  drill: Drill,
  fault: { expectedCode: RegExp; holdMs: number; start(): Promise<void>; repair(): Promise<void> },
): Promise<void> {
  await drill.startConsumer();
  const before = await drill.load(drill.nextEvents(30), 1_000);
  await waitFor(async () => (await appliedRows(drill.pool, drill.name)).length === before.length, {
    timeoutMs: 60_000,
    description: 'the warm-up events applied',
  });
  const retries = countInfrastructureRetries(drill.events, drill.topic);
  const faultAt = Date.now();
  await fault.start();
  const during = drill.load(drill.nextEvents(200), fault.holdMs);
  const raised = await waitFor(async () => (await drill.failingCodes()).find((code) => fault.expectedCode.test(code)), {
    timeoutMs: fault.holdMs + 30_000,
    description: `the failure alert series (${fault.expectedCode})`,
  });
  const raisedAfterMs = Date.now() - faultAt;
  expect(raised).toMatch(fault.expectedCode);
  const sent = await during;
  const most = retries.stop();
  expect(most, `the most infrastructure retries of one partition during the ${fault.holdMs} ms fault`).toBeGreaterThan(
    drill.policy.deliveryLimit,
  );
  const repairAt = Date.now();
  await fault.repair();
  const after = await drill.load(drill.nextEvents(30), 1_000);
  await drill.expectAllAppliedOnce([...before, ...sent, ...after]);
  await waitFor(async () => (await drill.failingCodes()).length === 0, {
    timeoutMs: 30_000,
    description: 'the failure alert series resolved',
  });
  // For the record (the bench's business, never asserted): how long the drill's alert series took.
  console.info(
    `${drill.name}: failure series ${raised} ${raisedAfterMs} ms after the fault, ${most} retries of one partition during it; resolved and all ${before.length + sent.length + after.length} applied ${Date.now() - repairAt} ms after the repair`,
  );
}
