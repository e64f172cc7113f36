/**
 * Issue 12, the proof: the seat database fails over to its standby (Postgres 17, the connector's
 * slot synchronized to the standby) in the middle of a steady on-sale, and every event committed
 * on the new timeline reaches Kafka and every consumer exactly once; duplicates only, never gaps.
 *
 * Real processes throughout: the stack's own primary + standby (the launcher's components, a
 * home and free ports of this file), the real outbox connector with slot.failover on the stack's
 * Connect, the seat service selling at a steady pace, the seat availability and sales ledger
 * consumers as child processes, the failover command's code and the reconcile command. The
 * primary's postmaster is killed with -9, not shut down.
 *
 * The story runs once in beforeAll and records what it saw; each test reads the records and the
 * end state.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorStatus, deleteConnector, type ConnectorStatus } from '../../connectors/connect-client.js';
import { applyOutboxConnector, type ConnectorConfig } from '../../connectors/outbox-connector.js';
import { connectorSettings } from '../../connectors/settings.js';
import { compareTotals, totalsFromLedger, totalsFromSeatDatabase } from '../../consumers/sales-ledger/recompute.js';
import { EVENTS } from '../../events/catalogue.js';
import { createPool } from '../../lib/postgres.js';
import { parseSettings } from '../../lib/settings.js';
import { waitFor } from '../../lib/wait.js';
import { migrateSeatDatabase, setupRoles } from '../../seat-service/database-setup.js';
import { openSeatService, type SeatService } from '../../seat-service/service.js';
import { seatServiceSettings } from '../../seat-service/settings.js';
import { LOCAL_CONNECT_ENV, LOCAL_ROLE_PASSWORDS } from '../../stack/config.js';
import { slotOnNode, type SlotOnNode } from '../../stack/failover.js';
import { adminUrl } from '../../stack/postgres-standby.js';
import { type ChildConsumer, runChildProgram, startChildProgram } from '../consumers/helpers/child-consumer.js';
import { consumerDatabase } from '../consumers/helpers/stack-fixture.js';
import { inboxIds, outboxIds, seatStateDifferences } from '../slot-recovery/support/delivery-checks.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { collectRecords, dropSlot, testLogger, type CollectedRecord } from '../support/seat-pipeline.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';
import { createFailoverShow, sellAtPace, type PacedSales } from './support/paced-sales.js';
import { startSynchronizedPair, type SynchronizedPair } from './support/synchronized-pair.js';

const stack = requireStack();
installLeakGuard();

const SEAT_EVENTS = 'com.stagefront.seat.';
const ORDER_CONFIRMED = EVENTS.orderConfirmed.type;
const RECONCILE = 'monitors/reconciliation/main.ts';
const PACE_MS = 200;
const STACK_CLI = 'stack/cli.ts';

type Run = { code: number | null; output: string };

interface Story {
  /** `npm run stack -- failover` while the primary still answered. */
  refusedWhilePrimaryUp: Run;
  /** `npm run stack -- failover` after the kill. */
  failover: Run;
  slotAfter: SlotOnNode;
  connectorAfter: ConnectorStatus | undefined;
  /** ce_ids the collector had read from Kafka at the kill. */
  onKafkaAtKill: Set<string>;
  killedAt: number;
  /** The connector's slot on the standby just before the kill. */
  slotOnStandbyBeforeKill: SlotOnNode;
  /** When the failover command returned: task RUNNING, slot active on the new primary. */
  failoverDoneAt: number;
  /** Outbox ids on the new primary when the command returned (the old timeline's rows that survived). */
  outboxAtPromotion: Set<string>;
  confirmedByOldPrimary: string[];
  failedOrders: number;
}

describe('failover on Postgres 17 with a synchronized slot: every event of the new timeline, exactly once', () => {
  const name = uniqueName('pgfailover').toLowerCase();
  const show = 'failover';
  const groups = { seats: `${name}-seats`, ledger: `${name}-ledger` };
  const measured: Record<string, number> = {};
  let pair: SynchronizedPair;
  let database: string;
  let connector: ConnectorConfig;
  let inboxes: Awaited<ReturnType<typeof consumerDatabase>>;
  let consumers: ChildConsumer[] = [];
  let collector: { records: CollectedRecord[]; stop: () => Promise<void> } | undefined;
  const services: SeatService[] = [];
  let sales: PacedSales | undefined;
  let story: Story;

  const seatUrl = (port: number, user = 'postgres', password = 'postgres') =>
    `postgres://${user}:${password}@127.0.0.1:${port}/${database}`;
  const newPrimaryUrl = () => seatUrl(pair.standbyPort);
  const debeziumUrl = (port: number) => seatUrl(port, 'stagefront_debezium', LOCAL_ROLE_PASSWORDS.debezium);
  const consumerEnv = (group: string): Record<string, string> => ({
    CONSUMER_DATABASE_URL: inboxes.url,
    KAFKA_BROKERS: stack.kafkaBrokers.join(','),
    SCHEMA_REGISTRY_URL: stack.registryUrl,
    TOPIC_PREFIX: name,
    CONSUMER_GROUP_ID: group,
    METRICS_PORT: '0',
    LOG_LEVEL: 'warn',
  });
  const reconcileEnv = (): Record<string, string> => ({
    RECONCILE_SEAT_DB_URL: debeziumUrl(pair.standbyPort),
    RECONCILE_CONSUMER_DB_URL: inboxes.url,
    RECONCILE_CONSUMERS: `seat-availability=${groups.seats},sales-ledger=${groups.ledger}`,
    RECONCILE_GRACE_MS: '0',
    LOG_LEVEL: 'info',
  });

  /** The failover command as on-call runs it, with this file's stack home, ports and connector. */
  const failoverCommand = (): Promise<Run> =>
    runChildProgram(
      STACK_CLI,
      {
        STACK_HOME: pair.layout.home,
        STACK_DIST: pair.layout.dist,
        STACK_POSTGRES_PORT: String(pair.primaryPort),
        STACK_POSTGRES_STANDBY: 'yes',
        STACK_POSTGRES_STANDBY_PORT: String(pair.standbyPort),
        CONNECT_URL: stack.connectUrl,
        ...LOCAL_CONNECT_ENV,
        CONNECTOR_NAME: name,
        KAFKA_BROKERS: stack.kafkaBrokers.join(','),
        SEAT_DB_PORT: String(pair.primaryPort),
        SEAT_DB_NAME: database,
        CONNECTOR_SEAT_DB_URL: debeziumUrl(pair.primaryPort),
        SLOT_NAME: name,
        TOPIC_PREFIX: name,
        TOPIC_PARTITIONS: '3',
        HEARTBEAT_INTERVAL_MS: '1000',
        CONNECTOR_SLOT_FAILOVER: 'yes',
      },
      ['failover'],
    );

  async function openService(port: number): Promise<SeatService> {
    const service = await openSeatService(
      parseSettings(seatServiceSettings, {
        SEAT_DB_URL: seatUrl(port, 'stagefront_service', LOCAL_ROLE_PASSWORDS.service),
        SEAT_DB_ADMIN_URL: seatUrl(port),
        SCHEMA_REGISTRY_URL: stack.registryUrl,
        HOLD_TTL_MS: '600000',
        SEAT_SERVICE_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.service,
        DEBEZIUM_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.debezium,
      }),
      testLogger,
    );
    services.push(service);
    return service;
  }

  async function prepareSeatDatabase(): Promise<void> {
    database = name;
    await adminQuery(adminUrl(pair.primaryPort), /* sql */ `create database ${pg.escapeIdentifier(database)}`);
    const pool = createPool({
      connectionString: seatUrl(pair.primaryPort),
      applicationName: 'test-migrate',
      logger: testLogger,
      max: 1,
    });
    try {
      await migrateSeatDatabase(pool, testLogger);
      await setupRoles(pool, LOCAL_ROLE_PASSWORDS);
    } finally {
      await pool.end();
    }
  }

  /** Every outbox row of the new primary, of each consumer's types, is in that consumer's inbox. */
  async function inboxesHoldNewTimeline(): Promise<boolean> {
    const [seatRows, seatInbox, orderRows, ledgerInbox] = await Promise.all([
      outboxIds(newPrimaryUrl(), SEAT_EVENTS),
      inboxIds(inboxes.pool, groups.seats),
      outboxIds(newPrimaryUrl(), ORDER_CONFIRMED),
      inboxIds(inboxes.pool, groups.ledger),
    ]);
    return seatRows.join() === seatInbox.join() && orderRows.join() === ledgerInbox.join();
  }

  const ceIds = () => new Set((collector?.records ?? []).map((r) => r.headers.ce_id ?? ''));

  beforeAll(async () => {
    pair = await startSynchronizedPair('pgfailover');
    await prepareSeatDatabase();
    connector = parseSettings(connectorSettings, {
      CONNECT_URL: stack.connectUrl,
      ...LOCAL_CONNECT_ENV,
      CONNECTOR_NAME: name,
      KAFKA_BROKERS: stack.kafkaBrokers.join(','),
      SEAT_DB_PORT: String(pair.primaryPort),
      SEAT_DB_NAME: database,
      CONNECTOR_SEAT_DB_URL: debeziumUrl(pair.primaryPort),
      SLOT_NAME: name,
      TOPIC_PREFIX: name,
      TOPIC_PARTITIONS: '3',
      HEARTBEAT_INTERVAL_MS: '1000',
      CONNECTOR_SLOT_FAILOVER: 'yes',
    });
    await applyOutboxConnector(connector, testLogger);
    const oldService = await openService(pair.primaryPort);
    await createFailoverShow(oldService, show);
    inboxes = await consumerDatabase('failover17_inbox');
    consumers = [
      startChildProgram('consumers/seat-availability/main.ts', consumerEnv(groups.seats)),
      startChildProgram('consumers/sales-ledger/main.ts', consumerEnv(groups.ledger)),
    ];
    collector = await collectRecords([`${name}.seat`, `${name}.order`]);

    // A steady on-sale; the slot is synchronized to the standby while it streams.
    sales = sellAtPace(oldService, show, PACE_MS);
    await sales.untilConfirmed(15);
    const standbySeatDb = seatUrl(pair.standbyPort);
    await waitFor(
      async () => {
        const slot = await slotOnNode(standbySeatDb, name);
        return slot.synced && !slot.temporary;
      },
      { timeoutMs: 120_000, intervalMs: 500, description: `slot ${name} synchronized to the standby and sync-ready` },
    );
    await waitFor(() => ceIds().size >= 50, { timeoutMs: 60_000, description: 'the stream to be flowing to Kafka' });
    const slotOnStandbyBeforeKill = await slotOnNode(standbySeatDb, name);
    const refusedWhilePrimaryUp = await failoverCommand();
    const confirmedByOldPrimary = sales.confirmedHoldIds();

    // kill -9 mid-stream; sales go on failing until the new primary takes them.
    const onKafkaAtKill = ceIds();
    const killedAt = Date.now();
    await pair.killPrimary();
    const failover = await failoverCommand();
    const failoverDoneAt = Date.now();
    const slotAfter = await slotOnNode(standbySeatDb, name);
    const connectorAfter = await connectorStatus(stack.connect, name);
    const outboxAtPromotion = new Set(await outboxIds(newPrimaryUrl(), ''));
    sales.switchTo(await openService(pair.standbyPort));
    await sales.untilConfirmed(15);
    await sales.stop();
    story = {
      refusedWhilePrimaryUp,
      failover,
      slotAfter,
      connectorAfter,
      onKafkaAtKill,
      killedAt,
      slotOnStandbyBeforeKill,
      failoverDoneAt,
      outboxAtPromotion,
      confirmedByOldPrimary,
      failedOrders: sales.failures(),
    };
    await waitFor(inboxesHoldNewTimeline, {
      timeoutMs: 120_000,
      intervalMs: 500,
      description: 'both inboxes to hold every outbox row of the new primary',
    });
  }, 420_000);

  afterAll(async () => {
    await sales?.stop().catch(() => undefined);
    await collector?.stop();
    for (const consumer of consumers) await consumer.close();
    for (const service of services) await service.close().catch(() => undefined);
    await deleteConnector(stack.connect, name).catch(() => undefined);
    if (pair !== undefined && database !== undefined) await dropSlot(newPrimaryUrl(), name).catch(() => undefined);
    await inboxes?.close();
    await pair?.remove();
    console.log('Postgres 17 failover measurements:', measured);
  });

  it("the standby held the connector's slot as a synchronized failover slot before the kill", () => {
    expect(story.slotOnStandbyBeforeKill).toMatchObject({
      exists: true,
      synced: true,
      temporary: false,
      failover: true,
      invalidationReason: null,
    });
  });

  it('the failover command refuses while the primary still answers (two primaries), naming the switchover flag', () => {
    const run = story.refusedWhilePrimaryUp;
    expect(run.code, run.output).toBe(1);
    expect(run.output).toContain(`the primary on port ${pair.primaryPort} still answers`);
    expect(run.output).toContain('--stop-primary');
  });

  it('the failover command promoted the standby and resumed the connector on it, on the slot it synchronized', async () => {
    const run = story.failover;
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(
      new RegExp(`seat database: primary on port ${pair.standbyPort}, timeline [2-9]\\d* \\(promoted now\\)`),
    );
    expect(run.output).toContain(`connector ${name}: RUNNING, tasks RUNNING`);
    expect(run.output).toContain(`slot ${name}: active, failover true`);
    expect(story.connectorAfter?.connector.state).toBe('RUNNING');
    expect(story.connectorAfter?.tasks.map((t) => t.state)).toEqual(['RUNNING']);
    expect(story.slotAfter).toMatchObject({ exists: true, failover: true, active: true });
    const { rows } = await adminQuery(newPrimaryUrl(), /* sql */ `select pg_is_in_recovery() as recovering`);
    expect(rows[0]).toEqual({ recovering: false });
    measured.killToStreamingSeconds = (story.failoverDoneAt - story.killedAt) / 1000;
    measured.failoverCommandSeconds = Number(/done in ([\d.]+) s/.exec(run.output)?.[1]);
  });

  it('every event committed on the new timeline is on Kafka; nothing on Kafka is missing from it (no gaps)', async () => {
    const outbox = new Set(await outboxIds(newPrimaryUrl(), ''));
    await waitFor(() => [...outbox].every((id) => ceIds().has(id)), {
      timeoutMs: 60_000,
      intervalMs: 500,
      description: 'every outbox row of the new primary on Kafka',
    });
    const onKafka = ceIds();
    const gaps = [...outbox].filter((id) => !onKafka.has(id));
    // synchronized_standby_slots: Debezium never got what the standby had not received.
    const notOnNewTimeline = [...onKafka].filter((id) => !outbox.has(id));
    const records = collector?.records ?? [];
    const firstNew = records
      .filter((r) => !story.outboxAtPromotion.has(r.headers.ce_id ?? ''))
      .map((r) => Number(r.message.timestamp))
      .sort((a, b) => a - b)[0];
    measured.outboxRowsOnNewPrimary = outbox.size;
    measured.eventsInFlightAtKill = [...story.outboxAtPromotion].filter((id) => !story.onKafkaAtKill.has(id)).length;
    measured.recordsOnKafka = records.length;
    measured.duplicates = records.length - onKafka.size;
    measured.gaps = gaps.length;
    measured.onKafkaButNotOnNewTimeline = notOnNewTimeline.length;
    measured.ordersFailedDuringFailover = story.failedOrders;
    if (firstNew !== undefined) measured.killToFirstNewTimelineEventOnKafkaSeconds = (firstNew - story.killedAt) / 1000;
    expect(gaps).toEqual([]);
    expect(notOnNewTimeline).toEqual([]);
    // A duplicate is the same event again: same ce_id, key, partition and bytes.
    const variants = new Map<string, Set<string>>();
    for (const r of records)
      variants.set(
        r.headers.ce_id ?? '',
        (variants.get(r.headers.ce_id ?? '') ?? new Set()).add(
          `${r.topic}|${r.partition}|${r.key}|${r.value.toString('base64')}`,
        ),
      );
    expect([...variants.values()].filter((v) => v.size > 1)).toEqual([]);
  });

  it('every consumer handled every event of the new timeline once: inboxes equal the outbox, ledger and read model equal the seat database', async () => {
    expect(await inboxesHoldNewTimeline()).toBe(true);
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
          description: 'the sales ledger totals to equal the seat database (no sale lost or counted twice)',
        },
      );
    } finally {
      await seatPool.end();
    }
    expect(await seatStateDifferences(newPrimaryUrl(), inboxes.pool)).toEqual([]);
    const { rows } = await adminQuery(newPrimaryUrl(), /* sql */ `select hold_id::text from orders`);
    const onNewTimeline = new Set((rows as { hold_id: string }[]).map((r) => r.hold_id));
    measured.ordersConfirmedByOldPrimary = story.confirmedByOldPrimary.length;
    measured.confirmedOrdersNotOnNewTimeline = story.confirmedByOldPrimary.filter(
      (id) => !onNewTimeline.has(id),
    ).length;
  });

  it('reconciliation against the new primary reports no gaps', async () => {
    const check = await runChildProgram(RECONCILE, reconcileEnv());
    expect(check.output).toContain('no gaps');
    expect(check.code, check.output).toBe(0);
  });
});
