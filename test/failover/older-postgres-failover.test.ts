/**
 * Issue 12, part 4: a primary failover in the middle of an on-sale on Postgres 15/16, where the
 * promoted standby has no logical slot, loses no event of the new timeline. Real processes: a
 * primary and its pg_basebackup standby of their own, the real outbox connector on the stack's
 * Connect, the seat availability and sales ledger consumers as child processes, and the
 * slot-recovery (--after-failover) and reconcile commands as on-call runs them (docs/failover.md).
 *
 * The story runs once, in beforeAll: sales stream; Connect falls behind (paused), so what the
 * primary commits next is on the standby but not on Kafka (the window at risk); the standby stops
 * receiving (its WAL receiver held), so what the primary commits after that exists only there;
 * kill -9 of the primary's postmaster during sales; promote; the runbook path; writes resume as
 * soon as the command says the slot exists. The tests read the records of that story.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorState, liveConnectorConfig } from '../../connectors/connector-lifecycle.js';
import { type ConnectApi, connectFetch } from '../../connectors/connect-client.js';
import { compareTotals, totalsFromLedger, totalsFromSeatDatabase } from '../../consumers/sales-ledger/recompute.js';
import { EVENTS } from '../../events/catalogue.js';
import { createPool } from '../../lib/postgres.js';
import type { SeatService } from '../../seat-service/service.js';
import { waitFor } from '../../lib/wait.js';
import { type ChildConsumer, runChildProgram, startChildProgram } from '../consumers/helpers/child-consumer.js';
import { consumerDatabase } from '../consumers/helpers/stack-fixture.js';
import {
  allRecords,
  inboxIds,
  outboxIds,
  repeatedIds,
  seatStateDifferences,
} from '../slot-recovery/support/delivery-checks.js';
import { createArena } from '../slot-recovery/support/seat-sales.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { collectRecords, testLogger, type CollectedRecord } from '../support/seat-pipeline.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';
import { startFailoverPipeline, type FailoverPipeline } from './support/failover-pipeline.js';
import { startReplicatedPair, type ReplicatedPair } from './support/replicated-pair.js';
import { sellSteadily, type SteadySales } from './support/steady-sales.js';
import { runWatchedProgram } from './support/watched-program.js';
import { LOCAL_CONNECT_ENV } from '../../stack/config.js';

const stack = requireStack();
installLeakGuard();

const SEAT_EVENTS = 'com.stagefront.seat.';
const ORDER_CONFIRMED = EVENTS.orderConfirmed.type;
const EVENTS_PER_ORDER = 5; // seat.held ×2, seat.sold ×2, order.confirmed
const RECONCILE = 'monitors/reconciliation/main.ts';
const RECOVERY = 'monitors/slot-recovery/main.ts';
const NEW_PRIMARY_FIRST_ORDER = 40;
const NEW_PRIMARY_ORDERS = 15;

type Run = { code: number | null; output: string };

interface Story {
  /** Orders the old primary acknowledged, and the one in flight when it died. */
  oldSales: SteadySales;
  /** Acknowledged before the standby was seen caught up, and after it stopped receiving WAL. */
  replicatedOrders: number[];
  heldOrders: number[];
  /** ce_ids on Kafka after the promotion, before the recovery. */
  onKafkaBefore: Set<string>;
  /** Outbox ids on the promoted standby before writes resumed: the old timeline's rows that survived. */
  outboxAtPromotion: Set<string>;
  /** The dry run on the promoted standby, and whether the slot existed after it. */
  dryRun: Run & { slotAfter: boolean };
  recovery: Run & { outputWhenWritesResumed: string };
  newSales: SteadySales;
}

async function pauseConnector(connect: ConnectApi, name: string): Promise<void> {
  const response = await connectFetch(connect, `/connectors/${encodeURIComponent(name)}/pause`, { method: 'PUT' });
  if (!response.ok) throw new Error(`pausing ${name}: HTTP ${response.status}`);
  await waitFor(async () => (await connectorState(connect, name)) === 'PAUSED', {
    timeoutMs: 30_000,
    description: `connector ${name} to be PAUSED`,
  });
}

describe('failover on Postgres 15/16 (no synchronized slot): the runbook path loses no event of the new timeline', () => {
  const name = uniqueName('failover').toLowerCase();
  const groups = { seats: `${name}-seats`, ledger: `${name}-ledger` };
  const measured: Record<string, number> = {};
  let pair: ReplicatedPair;
  let pipeline: FailoverPipeline;
  let inboxes: Awaited<ReturnType<typeof consumerDatabase>>;
  let consumers: ChildConsumer[] = [];
  let collector: { records: CollectedRecord[]; stop: () => Promise<void> } | undefined;
  let story: Story;

  const newPrimaryUrl = () => pipeline.adminUrl(pair.standby);
  const toolEnv = (): Record<string, string> => ({
    CONNECT_URL: stack.connectUrl,
    ...LOCAL_CONNECT_ENV,
    CONNECTOR_NAME: name,
    SLOT_RECOVERY_SEAT_DB_URL: pipeline.debeziumUrl(pair.standby),
    RECONCILE_SEAT_DB_URL: pipeline.debeziumUrl(pair.standby),
    RECONCILE_CONSUMER_DB_URL: inboxes.url,
    RECONCILE_CONSUMERS: `seat-availability=${groups.seats},sales-ledger=${groups.ledger}`,
    RECONCILE_GRACE_MS: '0',
    SLOT_RECOVERY_VERIFY_TIMEOUT_MS: '90000',
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
  const topics = () => [pipeline.topics.seat, pipeline.topics.order];

  /** Every outbox row of the new primary, of each consumer's types, is in that consumer's inbox. */
  async function inboxesHoldNewTimeline(): Promise<boolean> {
    const [seatRows, seatInbox, orderRows, ledgerInbox] = await Promise.all([
      outboxIds(newPrimaryUrl(), SEAT_EVENTS),
      inboxIds(inboxes.pool, groups.seats),
      outboxIds(newPrimaryUrl(), ORDER_CONFIRMED),
      inboxIds(inboxes.pool, groups.ledger),
    ]);
    const seats = new Set(seatInbox);
    const ledger = new Set(ledgerInbox);
    return seatRows.every((id) => seats.has(id)) && orderRows.every((id) => ledger.has(id));
  }

  /** On-sale on the primary; Connect falls behind; the standby falls behind; kill -9; promote. */
  async function failOver(
    oldService: SeatService,
  ): Promise<Pick<Story, 'oldSales' | 'replicatedOrders' | 'heldOrders'>> {
    const oldSales = sellSteadily(oldService, 0, 35);
    const acked = (n: number, what: string) =>
      waitFor(() => oldSales.acknowledged.length >= n || oldSales.failed() !== undefined, {
        timeoutMs: 60_000,
        description: what,
      });
    await acked(5, 'five orders acknowledged while everything streams');
    await pauseConnector(stack.connect, name);
    await acked(10, 'five more orders while Connect is behind');
    const replicatedOrders = [...oldSales.acknowledged];
    await pair.waitForStandbyCaughtUp();
    await pair.holdReplication();
    const heldFrom = oldSales.acknowledged.length;
    await acked(heldFrom + 4, 'four orders the standby never receives');
    await pair.killPrimary();
    await oldSales.stop();
    await pair.promoteStandby();
    const heldOrders = oldSales.acknowledged.slice(heldFrom);
    return { oldSales, replicatedOrders, heldOrders };
  }

  /** The runbook: slot-recovery --after-failover; writes resume on the new primary once it says the slot exists. */
  async function followRunbook(): Promise<Pick<Story, 'dryRun' | 'recovery' | 'newSales'>> {
    const dry = await runChildProgram(RECOVERY, toolEnv(), ['--after-failover', '--since', 'auto']);
    const slotAfter =
      (await pair.standby.admin(/* sql */ `select 1 from pg_replication_slots where slot_name = $1`, [name]))
        .rowCount === 1;
    const command = runWatchedProgram(RECOVERY, toolEnv(), ['--after-failover', '--since', 'auto', '--apply']);
    let ended = false;
    void command.finished.then(() => (ended = true));
    await waitFor(() => ended || command.output().includes('writes may resume'), {
      timeoutMs: 60_000,
      description: 'the recovery to create the slot on the new primary',
    });
    const outputWhenWritesResumed = command.output();
    const newSales = sellSteadily(
      await pipeline.openService(pair.standby),
      NEW_PRIMARY_FIRST_ORDER,
      NEW_PRIMARY_ORDERS,
      150,
    );
    const started = Date.now();
    const run = await command.finished;
    measured.recoveryMs = Date.now() - started;
    await waitFor(() => newSales.acknowledged.length === NEW_PRIMARY_ORDERS || newSales.failed() !== undefined, {
      timeoutMs: 60_000,
      description: 'the sales on the new primary to end',
    });
    await newSales.stop();
    return { dryRun: { ...dry, slotAfter }, recovery: { ...run, outputWhenWritesResumed }, newSales };
  }

  beforeAll(async () => {
    pair = await startReplicatedPair('older-pg');
    pipeline = await startFailoverPipeline(pair, stack, name);
    const oldService = await pipeline.openService(pair.primary);
    await createArena(oldService);
    inboxes = await consumerDatabase('failover_inbox');
    consumers = [
      startChildProgram('consumers/seat-availability/main.ts', consumerEnv(groups.seats)),
      startChildProgram('consumers/sales-ledger/main.ts', consumerEnv(groups.ledger)),
    ];

    const old = await failOver(oldService);
    collector = await collectRecords(topics());
    const onKafkaBefore = new Set((await allRecords(collector.records, topics())).map((r) => r.headers.ce_id ?? ''));
    const outboxAtPromotion = new Set(
      (await adminQuery(newPrimaryUrl(), /* sql */ `select id::text from outbox`)).rows.map(
        (r) => (r as { id: string }).id,
      ),
    );
    const runbook = await followRunbook();
    story = { ...old, onKafkaBefore, outboxAtPromotion, ...runbook };
    await waitFor(inboxesHoldNewTimeline, {
      timeoutMs: 90_000,
      description: "both inboxes to hold every outbox row of the new primary's timeline",
    });
  }, 600_000);

  afterAll(async () => {
    await collector?.stop();
    for (const consumer of consumers) await consumer.close();
    await pipeline?.teardown();
    await inboxes?.close();
    await pair?.remove();
    console.log('older-postgres failover measurements:', measured);
  });

  it('the orders the old primary acknowledged after the standby stopped receiving do not exist on the new timeline', async () => {
    const { rows } = await adminQuery(newPrimaryUrl(), /* sql */ `select buyer_id from orders`);
    const onNewTimeline = new Set((rows as { buyer_id: string }[]).map((r) => r.buyer_id));
    const lost = story.oldSales.acknowledged.filter((order) => !onNewTimeline.has(`buyer-${order}`));
    const inFlight = story.oldSales.failed();
    measured.postgresVersionNum = Number(
      (await pair.standby.admin(/* sql */ `show server_version_num`)).rows[0]?.server_version_num,
    );
    measured.ordersAcknowledgedByOldPrimary = story.oldSales.acknowledged.length;
    measured.acknowledgedOrdersNotOnNewTimeline = lost.length;
    measured.eventsCommittedOnOldPrimaryOnly = lost.length * EVENTS_PER_ORDER;
    measured.orderInFlightAtKillOnNewTimeline =
      inFlight !== undefined && onNewTimeline.has(`buyer-${inFlight.order}`) ? 1 : 0;
    // Asynchronous replication: what the standby had replayed survives, the rest went with the old primary.
    for (const order of story.replicatedOrders)
      expect(onNewTimeline.has(`buyer-${order}`), `order ${order} was replayed by the standby`).toBe(true);
    for (const order of story.heldOrders)
      expect(lost, `order ${order} was committed after the standby stopped receiving`).toContain(order);
    expect(lost.length).toBeGreaterThanOrEqual(4);
  });

  it('the dry run on the promoted standby prints the plan and changes nothing', () => {
    const { dryRun } = story;
    expect(dryRun.code, dryRun.output).toBe(0);
    expect(dryRun.output).toContain(
      `after a failover: new primary promoted; connector ${name}: PAUSED; slot ${name} on the new primary: missing`,
    );
    expect(dryRun.output).toContain(`3. point it at 127.0.0.1:${pair.standby.port}`);
    expect(dryRun.output).toContain('dry run: nothing changed');
    if (process.env.TEST_SHOW_PLAN === '1') console.log(dryRun.output, story.recovery.output);
    expect(dryRun.slotAfter).toBe(false);
  });

  it('the recovery creates the slot before writes resume, points the connector at the new primary and re-emits the window', async () => {
    const { recovery } = story;
    expect(recovery.code, recovery.output).toBe(0);
    // Writes resumed once the slot existed, before the connector streamed again: the slot kept them.
    expect(recovery.outputWhenWritesResumed).toContain('slot created on the new primary: writes may resume');
    expect(recovery.outputWhenWritesResumed).not.toContain('connector running on a fresh slot');
    for (const step of [
      'connector stopped',
      'connector now points at the new primary',
      'connector offsets reset',
      'connector running on a fresh slot',
      'incremental snapshot of the outbox requested',
      'no gaps since the start time',
    ]) {
      expect(recovery.output).toContain(step);
    }
    const live = await liveConnectorConfig(stack.connect, name);
    expect(live['database.port']).toBe(String(pair.standby.port));
    expect(await connectorState(stack.connect, name)).toBe('RUNNING');
    const { rows } = await pair.standby.admin(
      /* sql */ `select active, wal_status from pg_replication_slots where slot_name = $1`,
      [name],
    );
    expect(rows).toEqual([{ active: true, wal_status: 'reserved' }]);
    expect(story.newSales.failed()).toBeUndefined();
    expect(story.newSales.acknowledged).toHaveLength(NEW_PRIMARY_ORDERS);
  });

  it("every outbox row of the new primary's timeline is on Kafka and in each consumer's inbox; reconciliation finds no gap", async () => {
    const [outbox, records] = await Promise.all([
      adminQuery(newPrimaryUrl(), /* sql */ `select id::text from outbox`),
      allRecords(collector?.records ?? [], topics()),
    ]);
    const outboxRows = new Set((outbox.rows as { id: string }[]).map((r) => r.id));
    const delivered = new Set(records.map((r) => r.headers.ce_id ?? ''));
    const atRisk = [...story.outboxAtPromotion].filter((id) => !story.onKafkaBefore.has(id));
    const missing = [...outboxRows].filter((id) => !delivered.has(id));
    const notOnNewTimeline = [...delivered].filter((id) => !outboxRows.has(id));
    Object.assign(measured, {
      outboxRowsOnNewTimeline: outboxRows.size,
      recordsOnKafka: records.length,
      duplicatesOnKafka: records.length - delivered.size,
      idsRepeated: repeatedIds(records).size,
      atRiskRowsReEmitted: atRisk.length,
      gaps: missing.length,
      onKafkaButNotOnNewTimeline: notOnNewTimeline.length,
    });
    expect(missing).toEqual([]);
    // The window at risk (committed while Connect was behind, replayed by the standby) was not on Kafka before the recovery.
    expect(atRisk.length).toBeGreaterThan(0);
    expect(notOnNewTimeline).toEqual([]);
    expect(await inboxesHoldNewTimeline()).toBe(true);
    const check = await runChildProgram(RECONCILE, toolEnv());
    expect(check.code, check.output).toBe(0);
    expect(check.output).toContain('no gaps');
  });

  it('each sale of the new timeline is counted once: the ledger equals a recompute from the new primary, the read model its seats', async () => {
    await waitFor(inboxesHoldNewTimeline, { timeoutMs: 60_000, description: 'both inboxes to hold the new timeline' });
    const seatPool = createPool({
      connectionString: newPrimaryUrl(),
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
          description: 'the sales ledger totals to equal the new primary (no sale lost or counted twice)',
        },
      );
    } finally {
      await seatPool.end();
    }
    expect(await seatStateDifferences(newPrimaryUrl(), inboxes.pool)).toEqual([]);
  });

  it('running the recovery again changes nothing', async () => {
    await waitFor(inboxesHoldNewTimeline, { timeoutMs: 60_000, description: 'both inboxes to hold the new timeline' });
    const again = await runChildProgram(RECOVERY, toolEnv(), ['--after-failover', '--since', 'auto', '--apply']);
    expect(again.code, again.output).toBe(0);
    expect(again.output).toContain('connector already streams from the new primary');
    expect(again.output).toContain('nothing to re-emit');
    expect(again.output).not.toContain('connector stopped');
    const { rows } = await pair.standby.admin(
      /* sql */ `select count(*)::int as n from debezium_signal where type = 'execute-snapshot'`,
      [],
      pipeline.database,
    );
    expect(rows[0]).toEqual({ n: 1 });
    expect(await connectorState(stack.connect, name)).toBe('RUNNING');
  });
});
