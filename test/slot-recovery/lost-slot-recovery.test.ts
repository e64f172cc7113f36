/**
 * Issue 5, item 6: after a lost slot, the recovery brings every outbox row within retention to
 * the consumers exactly once. Real processes throughout: a seat database on the 1 MB-segment
 * slot-test cluster, the real outbox connector on the stack's Connect, the seat availability and
 * sales ledger consumers as child processes, and the reconcile and slot-recovery commands as the
 * on-call person runs them.
 *
 * The story runs once, in beforeAll: stream, lose the slot, dry run, recover. Each step's output
 * and the state it left are recorded there; every test reads those records and the end state, so
 * each test can run alone (-t) and none depends on another having run first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorState, stopConnector } from '../../connectors/connector-lifecycle.js';
import { compareTotals, totalsFromLedger, totalsFromSeatDatabase } from '../../consumers/sales-ledger/recompute.js';
import { EVENTS } from '../../events/catalogue.js';
import { createPool } from '../../lib/postgres.js';
import { waitFor } from '../../lib/wait.js';
import { type ChildConsumer, runChildProgram, startChildProgram } from '../consumers/helpers/child-consumer.js';
import { consumerDatabase } from '../consumers/helpers/stack-fixture.js';
import { waitForSlotActive } from '../slot-monitor/support/debezium-connector.js';
import { setClusterSettings, startSlotCluster, type SlotCluster } from '../slot-monitor/support/slot-cluster.js';
import { WalTraffic } from '../slot-monitor/support/wal-traffic.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { collectRecords, testLogger } from '../support/seat-pipeline.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';
import {
  allRecords,
  inboxIds,
  outboxIds,
  repeatedIds,
  seatStateDifferences,
  topicsStartingWith,
} from './support/delivery-checks.js';
import { startLostSlotPipeline, type LostSlotPipeline } from './support/lost-slot-pipeline.js';
import { createArena, holdOnly, sellInBackground, sellOrder } from './support/seat-sales.js';
import { LOCAL_CONNECT_ENV } from '../../stack/config.js';

const stack = requireStack();
installLeakGuard();

const SEAT_EVENTS = 'com.stagefront.seat.';
const ORDER_CONFIRMED = EVENTS.orderConfirmed.type;
const RECONCILE = 'monitors/reconciliation/main.ts';
const RECOVERY = 'monitors/slot-recovery/main.ts';

/** The recovery's JSON log line of one step. */
function logLine(output: string, step: string): { since?: string; consumers?: { published: number }[] } {
  return JSON.parse(output.split('\n').find((l) => l.includes(`"step":"${step}"`)) ?? '{}') as {
    since?: string;
    consumers?: { published: number }[];
  };
}

type Run = Awaited<ReturnType<typeof runChildProgram>>;

/** What each step of the story printed, and the state it left behind. */
interface Story {
  /** Reconciliation while the slot was healthy and the consumers had caught up. */
  healthyCheck: Run;
  /** Reconciliation after the slot was lost, sales going on. */
  gapCheck: Run;
  oldestMissingMs: number;
  dryRun: Run & { slotAfter: string | null | undefined; connectorAfter: string | undefined };
  recovery: Run & { slotAfter: string | null | undefined };
}

/** Outbox rows in the re-emit window, as the recovery's verify step counted them. */
function verifiedRows(output: string): number {
  return (logLine(output, 'verify').consumers ?? []).reduce((sum, c) => sum + c.published, 0);
}

describe('lost-slot recovery: every outbox row within retention reaches every consumer exactly once', () => {
  const name = uniqueName('recovery').toLowerCase();
  const groups = { seats: `${name}-seats`, ledger: `${name}-ledger` };
  const measured: Record<string, number> = {};
  let cluster: SlotCluster;
  let pipeline: LostSlotPipeline;
  let inboxes: Awaited<ReturnType<typeof consumerDatabase>>;
  let consumers: ChildConsumer[] = [];
  let traffic: WalTraffic;
  let story: Story;

  const toolEnv = (): Record<string, string> => ({
    CONNECT_URL: stack.connectUrl,
    ...LOCAL_CONNECT_ENV,
    CONNECTOR_NAME: name,
    SLOT_RECOVERY_SEAT_DB_URL: pipeline.debeziumUrl,
    RECONCILE_SEAT_DB_URL: pipeline.debeziumUrl,
    RECONCILE_CONSUMER_DB_URL: inboxes.url,
    RECONCILE_CONSUMERS: `seat-availability=${groups.seats},sales-ledger=${groups.ledger}`,
    RECONCILE_GRACE_MS: '0',
    SLOT_RECOVERY_VERIFY_TIMEOUT_MS: '120000',
    LOG_LEVEL: 'info',
  });
  const consumerEnv = (group: string): Record<string, string> => ({
    CONSUMER_DATABASE_URL: inboxes.url,
    KAFKA_BROKERS: stack.kafkaBrokers.join(','),
    SCHEMA_REGISTRY_URL: stack.registryUrl,
    TOPIC_PREFIX: name,
    CONSUMER_GROUP_ID: group,
    METRICS_PORT: '0',
    LOG_LEVEL: 'warn',
  });

  /** Every outbox row of each consumer's types is in its inbox, and nothing else is. */
  async function inboxesMatchOutbox(): Promise<boolean> {
    const [seatRows, seatInbox, orderRows, ledgerInbox] = await Promise.all([
      outboxIds(pipeline.adminUrl, SEAT_EVENTS),
      inboxIds(inboxes.pool, groups.seats),
      outboxIds(pipeline.adminUrl, ORDER_CONFIRMED),
      inboxIds(inboxes.pool, groups.ledger),
    ]);
    return seatRows.join() === seatInbox.join() && orderRows.join() === ledgerInbox.join();
  }

  const waitForInboxes = (what: string) =>
    waitFor(inboxesMatchOutbox, {
      timeoutMs: 60_000,
      description: `both inboxes to hold every outbox row of their types${what}`,
    });

  /** Sales while the slot is healthy; the consumers catch up; reconciliation. */
  async function streamWhileHealthy(): Promise<Run> {
    for (let order = 0; order < 5; order += 1) await sellOrder(pipeline.service, order);
    await waitForInboxes('');
    return runChildProgram(RECONCILE, toolEnv());
  }

  /** The connector stopped, the slot lost under WAL traffic, sales going on; reconciliation. */
  async function loseTheSlot(): Promise<Run> {
    await stopConnector(stack.connect, name);
    await waitForSlotActive(cluster, name, false);
    await setClusterSettings(cluster, {
      max_wal_size: '16MB',
      min_wal_size: '2MB',
      max_slot_wal_keep_size: '4MB',
      checkpoint_timeout: '1h',
    });
    for (let order = 5; order < 15; order += 1) {
      await sellOrder(pipeline.service, order);
      await traffic.step();
    }
    for (const seat of [100, 101, 102]) await holdOnly(pipeline.service, seat);
    await waitFor(
      async () => {
        await traffic.step();
        await traffic.checkpoint();
        return (await traffic.slotState(name))?.walStatus === 'lost';
      },
      { timeoutMs: 60_000, intervalMs: 50, description: `slot ${name} to be lost` },
    );
    for (let order = 15; order < 18; order += 1) await sellOrder(pipeline.service, order);
    return runChildProgram(RECONCILE, toolEnv());
  }

  /** `--since auto --apply` with sales going on during the recovery. */
  async function recover(): Promise<Run> {
    const background = sellInBackground(pipeline.service, 18, 15);
    const started = Date.now();
    const recovery = await runChildProgram(RECOVERY, toolEnv(), ['--since', 'auto', '--apply']);
    measured.recoveryMs = Date.now() - started;
    measured.ordersSoldDuringRecovery = await background.stop();
    measured.reEmittedRows = verifiedRows(recovery.output);
    return recovery;
  }

  beforeAll(async () => {
    cluster = await startSlotCluster();
    pipeline = await startLostSlotPipeline(cluster, stack, name);
    await createArena(pipeline.service);
    inboxes = await consumerDatabase('recovery_inbox');
    consumers = [
      startChildProgram('consumers/seat-availability/main.ts', consumerEnv(groups.seats)),
      startChildProgram('consumers/sales-ledger/main.ts', consumerEnv(groups.ledger)),
    ];
    traffic = await WalTraffic.connect(pipeline.adminUrl);

    const healthyCheck = await streamWhileHealthy();
    const gapCheck = await loseTheSlot();
    const oldestMissingMs = Math.min(
      ...[...gapCheck.output.matchAll(/oldest missing created at (\S+)/g)].map((m) => new Date(m[1] ?? '').getTime()),
    );
    const dry = await runChildProgram(RECOVERY, toolEnv(), ['--since', 'auto']);
    const dryRun = {
      ...dry,
      slotAfter: (await traffic.slotState(name))?.walStatus,
      connectorAfter: await connectorState(stack.connect, name),
    };
    const recovery = await recover();
    story = {
      healthyCheck,
      gapCheck,
      oldestMissingMs,
      dryRun,
      recovery: { ...recovery, slotAfter: (await traffic.slotState(name))?.walStatus },
    };
  }, 600_000);

  afterAll(async () => {
    for (const consumer of consumers) await consumer.close();
    await traffic?.close();
    await pipeline?.teardown();
    await inboxes?.close();
    await cluster?.stop();
    console.log('lost-slot recovery measurements:', measured);
  });

  it('streams while the slot is healthy, and reconciliation finds no gap', () => {
    expect(story.healthyCheck.output).toContain('no gaps');
    expect(story.healthyCheck.code).toBe(0);
  });

  it('loses the slot while the connector is stopped and sales go on; reconciliation reports the gap', () => {
    const check = story.gapCheck;
    expect(check.code, check.output).toBe(3);
    expect(check.output).toContain(
      `${groups.seats} (seat-availability): published ${20 + 13 * 4 + 3}, handled 20, missing ${13 * 4 + 3}`,
    );
    expect(check.output).toContain(`${groups.ledger} (sales-ledger): published 18, handled 5, missing 13`);
    expect(Number.isFinite(story.oldestMissingMs)).toBe(true);
  });

  it('the dry run prints the plan and changes nothing', () => {
    const dry = story.dryRun;
    expect(dry.code, dry.output).toBe(0);
    expect(dry.output).toContain(`slot ${name}: wal_status lost`);
    expect(dry.output).toContain(`2. drop slot ${name}`);
    expect(dry.output).toContain('dry run: nothing changed');
    if (process.env.TEST_SHOW_PLAN === '1') console.log(dry.output);
    expect(dry.slotAfter).toBe('lost');
    expect(dry.connectorAfter).toBe('STOPPED');
  });

  it('--since auto --apply replaces the slot, re-emits, and every inbox ends up with every outbox row once', async () => {
    const { recovery } = story;
    expect(recovery.code, recovery.output).toBe(0);
    // --since auto: the oldest row some inbox lacked, minus the default safety margin (5 minutes).
    expect(logLine(recovery.output, 'start-time').since).toBe(new Date(story.oldestMissingMs - 300_000).toISOString());
    // The connector was stopped by the test already (Debezium would otherwise retry the lost slot).
    for (const step of [
      'connector already stopped',
      'lost slot dropped',
      'connector offsets reset',
      'connector running on a fresh slot',
      'incremental snapshot of the outbox requested',
      'no gaps since the start time',
    ]) {
      expect(recovery.output).toContain(step);
    }
    expect(recovery.slotAfter).toBe('reserved');

    await waitForInboxes(', sales during the recovery included');
    const seatPool = createPool({
      connectionString: pipeline.adminUrl,
      applicationName: 'test-ledger',
      logger: testLogger,
      max: 1,
    });
    try {
      await waitFor(
        async () =>
          compareTotals(await totalsFromLedger(inboxes.pool), await totalsFromSeatDatabase(seatPool)).length === 0,
        {
          timeoutMs: 30_000,
          description: 'the sales ledger totals to equal the seat database (no sale lost or counted twice)',
        },
      );
    } finally {
      await seatPool.end();
    }
    expect(await seatStateDifferences(pipeline.adminUrl, inboxes.pool)).toEqual([]);
  });

  it('the re-emitted records carry the original ce_id, key and bytes, and the inboxes dropped them', async () => {
    await waitForInboxes(' after the recovery');
    const topics = [pipeline.topics.seat, pipeline.topics.order];
    const collector = await collectRecords(topics);
    try {
      const records = await allRecords(collector.records, topics);
      const { rows } = await adminQuery(pipeline.adminUrl, /* sql */ `select id::text from outbox`);
      const outbox = new Set((rows as { id: string }[]).map((r) => r.id));
      const delivered = new Set(records.map((r) => r.headers.ce_id));
      expect(delivered).toEqual(outbox);
      const repeated = repeatedIds(records);
      measured.outboxRows = outbox.size;
      measured.recordsOnTopics = records.length;
      measured.reEmittedDuplicates = records.length - delivered.size;
      expect(repeated.size).toBeGreaterThan(0);
      // Signal and watermark inserts are dropped by the Filter transform: no <prefix>.public.* topic.
      expect(await topicsStartingWith(`${name}.`)).toEqual([
        `${name}.order`,
        `${name}.order.dlq`,
        `${name}.seat`,
        `${name}.seat.dlq`,
      ]);
      for (const copies of repeated.values()) {
        const [first, ...others] = copies;
        for (const copy of others) {
          expect({ key: copy.key, topic: copy.topic, type: copy.headers.ce_type, partition: copy.partition }).toEqual({
            key: first?.key,
            topic: first?.topic,
            type: first?.headers.ce_type,
            partition: first?.partition,
          });
          expect(copy.value.equals(first?.value ?? Buffer.alloc(0))).toBe(true);
        }
      }
    } finally {
      await collector.stop();
    }
  });

  it('reconciliation reports no gaps afterwards, and running the recovery again changes nothing', async () => {
    await waitForInboxes(' after the recovery');
    const check = await runChildProgram(RECONCILE, toolEnv());
    expect(check.code, check.output).toBe(0);
    const again = await runChildProgram(RECOVERY, toolEnv(), ['--since', 'auto', '--apply']);
    expect(again.code, again.output).toBe(0);
    expect(again.output).toContain('nothing to re-emit');
    expect(again.output).not.toContain('lost slot dropped');
    const { rows } = await adminQuery(
      pipeline.adminUrl,
      /* sql */ `select id from debezium_signal where type = 'execute-snapshot'`,
    );
    expect(rows).toHaveLength(1);
    expect(await connectorState(stack.connect, name)).toBe('RUNNING');
  });
});
