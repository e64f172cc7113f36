/**
 * Every rehearsal check can fail, and a failure shows in every report. A small on-sale through
 * the real seat service on a seat database of its own, its outbox rows turned into the records
 * the Outbox Event Router publishes and handed to the real consumers' effects (the runtime's
 * decode and applyEffects: inbox rows, read model, ledger, a real SMTP send and its stamp) on a
 * consumer database of its own. No Debezium or Kafka: the checks read only the two databases and
 * the mailbox. Every check passes on that state; then one thing at a time is broken, the way a
 * bug of the pipeline would break it, and exactly the check that should see it fails. Then the
 * text, JSON and HTML reports of a run with a failing check say FAIL, with the check's name.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confirmationEmailConsumer } from '../../consumers/confirmation-email/consumer.js';
import { createEmailSender } from '../../consumers/confirmation-email/send-confirmation.js';
import { applyEffects } from '../../consumers/runtime/apply-effects.js';
import { decodeCloudEvent } from '../../consumers/runtime/cloud-event.js';
import { type CatalogueEvent, catalogueEventTypes } from '../../consumers/payloads.js';
import type { PartitionControl, ProcessingContext } from '../../consumers/runtime/context.js';
import type { ConsumedEvent, ConsumerDefinition, SourceRecord } from '../../consumers/runtime/types.js';
import { applyConfirmedOrders } from '../../consumers/sales-ledger/apply-orders.js';
import { salesLedgerConsumer } from '../../consumers/sales-ledger/consumer.js';
import { seatAvailabilityConsumer } from '../../consumers/seat-availability/consumer.js';
import { EVENTS } from '../../events/catalogue.js';
import { createPool, type Pool } from '../../lib/postgres.js';
import { createSchemaRegistry } from '../../lib/schema-registry.js';
import { parseSettings } from '../../lib/settings.js';
import { seatDatabaseNow } from '../../monitors/reconciliation/reconcile.js';
import { describeReconciliation } from '../../monitors/reconciliation/report.js';
import {
  availabilityCheck,
  emailCheck,
  exactlyOnceChecks,
  ledgerCheck,
  oversoldCheck,
  reconcileRun,
  type Check,
} from '../../rehearsal/consistency.js';
import { drillRecords, type DrillScope } from '../../rehearsal/drill-verdict.js';
import type { DrillRun } from '../../rehearsal/drills.js';
import type { DrillRecord, RehearsalRecord } from '../../rehearsal/record.js';
import { renderTextReport, writeReport } from '../../rehearsal/report.js';
import { fixtureRecord, QUIET_EXTRAS } from './fixtures/report-fixture.js';
import { migrateSeatDatabase, setupRoles } from '../../seat-service/database-setup.js';
import { createShow, seatId } from '../../seat-service/inventory.js';
import { openSeatService, type SeatService } from '../../seat-service/service.js';
import { seatServiceSettings } from '../../seat-service/settings.js';
import { LOCAL_ROLE_PASSWORDS, stackLayout } from '../../stack/config.js';
import { runChildProgram } from '../consumers/helpers/child-consumer.js';
import { startSmtpSink, type SmtpSink } from '../consumers/helpers/smtp-sink.js';
import { consumerDatabase } from '../consumers/helpers/stack-fixture.js';
import { CHROMIUM_HINT, chromiumCommand, openPage } from '../support/chromium.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { testLogger } from '../support/seat-pipeline.js';
import { createTestDatabase, requireStack, uniqueName } from '../support/stack.js';

const stack = requireStack();
installLeakGuard();

const CHECK = {
  oversold: 'no seat sold twice',
  seats: 'seat-availability handled every event once',
  ledgerInbox: 'sales-ledger handled every event once',
  emailInbox: 'confirmation-email handled every event once',
  availability: 'availability read model matches the seats',
  ledger: 'sales ledger equals a recompute from the seat database',
  email: 'one confirmation email per order',
} as const;

interface World {
  showId: string;
  seatPool: Pool;
  seatAdminUrl: string;
  consumerPool: Pool;
  consumerUrl: string;
  service: SeatService;
  sink: SmtpSink;
  /** The run's window, on the seat database's clock. */
  since: Date;
  until: Date;
  /** Orders confirmed and seats sold, from the seat service's answers. */
  orders: { orderId: string; eventIds: string[]; seats: string[] }[];
  /** order.confirmed events as the consumers decoded them (ce_id → event). */
  confirmed: CatalogueEvent<'orderConfirmed'>[];
  close: () => Promise<void>;
}

let world: World;

/** The Kafka record the Outbox Event Router makes of an outbox row (connectors/seat-outbox.json: key, value, headers). */
interface OutboxRow {
  id: string;
  aggregatetype: string;
  aggregateid: string;
  type: string;
  payload: Buffer;
  ce_source: string;
  ce_specversion: string;
  ce_time: string;
  ce_subject: string;
  content_type: string;
  ce_dataschema: string;
  ce_traceparent: string;
  created_ms: number;
}

function routerRecord(row: OutboxRow, offset: number): SourceRecord {
  return {
    topic: `${world.showId}.${row.aggregatetype}`,
    partition: 0,
    offset: String(offset),
    key: Buffer.from(row.aggregateid),
    value: row.payload,
    headers: {
      id: row.id,
      ce_id: row.id,
      ce_type: row.type,
      ce_source: row.ce_source,
      ce_specversion: row.ce_specversion,
      ce_time: row.ce_time,
      ce_subject: row.ce_subject,
      ce_dataschema: row.ce_dataschema,
      ce_traceparent: row.ce_traceparent,
      'content-type': row.content_type,
    },
    timestamp: String(Math.round(row.created_ms)),
  };
}

/** What applyEffects reads of a running consumer: its definition, database, claim token and unstamped sends. */
function processingContext(definition: ConsumerDefinition, pool: Pool): ProcessingContext {
  const used: Partial<ProcessingContext> = {
    definition,
    pool,
    claimToken: randomUUID(),
    performedNotStamped: new Set(),
    // The email's deadline: these events are minutes old, none comes past it.
    policy: {
      deadlineMs: 1_800_000,
      lateRetryWindowMs: 60_000,
      deliveryLimit: 5,
      retryBaseMs: 200,
      retryCapMs: 60_000,
    },
  };
  return used as ProcessingContext;
}

const wholePartition: PartitionControl = {
  topic: 'all',
  partition: 0,
  active: () => true,
  pause: () => () => undefined,
  heartbeat: async () => true,
  commitThrough: async () => true,
};

/** The Message-IDs the mailbox received, without their angle brackets (as the rehearsal's mail sinks give them). */
const received = () => world.sink.received.map((m) => m.messageId.replace(/^<|>$/g, ''));

async function runChecks(messageIds: readonly string[] = received()): Promise<Check[]> {
  const { seatPool, consumerPool, showId, since, until } = world;
  return [
    await oversoldCheck(seatPool, showId),
    ...exactlyOnceChecks(await reconcileRun(seatPool, consumerPool, since, until)),
    await availabilityCheck(seatPool, consumerPool, showId),
    await ledgerCheck(seatPool, consumerPool, showId),
    await emailCheck(seatPool, messageIds, since),
  ];
}

const failing = (checks: readonly Check[]) => checks.filter((c) => !c.ok).map((c) => c.name);

/** Each case's checks, for the reports. */
const broken = new Map<string, Check[]>();

/** Breaks one thing, runs every check, mends it; the checks of the broken state. */
async function whileBroken(
  label: string,
  breakIt: () => Promise<() => Promise<void>>,
  messageIds?: readonly string[],
): Promise<Check[]> {
  const mend = await breakIt();
  let checks: Check[];
  try {
    checks = await runChecks(messageIds);
  } finally {
    await mend();
  }
  broken.set(label, checks);
  return checks;
}

const detailOf = (checks: readonly Check[], name: string) => checks.find((c) => c.name === name)?.detail ?? '';

beforeAll(async () => {
  const showId = uniqueName('checks').toLowerCase();
  const seatDb = await createTestDatabase('checks_seat');
  const seatPool = createPool({ connectionString: seatDb.url, applicationName: 'checks', logger: testLogger, max: 3 });
  const closeSeat = track('seat database', async () => {
    await seatPool.end();
    await seatDb.drop();
  });
  await migrateSeatDatabase(seatPool, testLogger);
  await setupRoles(seatPool, LOCAL_ROLE_PASSWORDS);
  const service = await openSeatService(
    parseSettings(seatServiceSettings, {
      SEAT_DB_URL: seatDb.url.replace('postgres:postgres@', `stagefront_service:${LOCAL_ROLE_PASSWORDS.service}@`),
      SEAT_DB_ADMIN_URL: seatDb.url,
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      HOLD_TTL_MS: '600000',
      SEAT_SERVICE_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.service,
      DEBEZIUM_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.debezium,
    }),
    testLogger,
  );
  const closeService = track('seat service', () => service.close());
  await createShow(service.pool, {
    showId,
    title: 'checks night',
    startsAt: new Date('2027-06-01T20:00:00Z'),
    onSaleAt: new Date('2026-12-01T10:00:00Z'),
    sections: [
      { section: 'A', rows: 2, seatsPerRow: 4, priceCents: 4000 },
      { section: 'B', rows: 1, seatsPerRow: 4, priceCents: 2500 },
    ],
  });

  // The on-sale: two orders, a hold given back, a seat taken, a hold still open at the end.
  const since = await seatDatabaseNow(seatPool);
  const orders: World['orders'] = [];
  const buy = async (seats: string[], buyer: string) => {
    const hold = await service.hold({ showId, seatIds: seats, buyerId: buyer });
    if (hold.status !== 'held') throw new Error(`hold of ${seats.join(', ')}: ${hold.status}`);
    const order = await service.confirm({ holdId: hold.holdId, buyerEmail: `${buyer}@example.com` });
    if (order.status !== 'confirmed') throw new Error(`confirm of ${hold.holdId}: ${order.status}`);
    orders.push({ orderId: order.orderId, eventIds: order.eventIds, seats });
  };
  await buy([seatId(showId, 'A', 1, 1), seatId(showId, 'A', 1, 2)], 'ada');
  await buy([seatId(showId, 'B', 1, 1), seatId(showId, 'B', 1, 2), seatId(showId, 'B', 1, 3)], 'ben');
  const givenBack = await service.hold({ showId, seatIds: [seatId(showId, 'A', 2, 1)], buyerId: 'cy' });
  if (givenBack.status !== 'held') throw new Error(`hold: ${givenBack.status}`);
  expect((await service.release(givenBack.holdId)).status).toBe('released');
  expect((await service.hold({ showId, seatIds: [seatId(showId, 'A', 1, 1)], buyerId: 'dee' })).status).toBe(
    'seat_taken',
  );
  expect(
    (await service.hold({ showId, seatIds: [seatId(showId, 'A', 2, 2), seatId(showId, 'A', 2, 3)], buyerId: 'eve' }))
      .status,
  ).toBe('held');
  const until = new Date((await seatDatabaseNow(seatPool)).getTime() + 1);

  // The consumers, each handed every record of the run in outbox order.
  const consumers = await consumerDatabase('checks_consumers');
  const sink = await startSmtpSink();
  const transport = createEmailSender({
    smtpHost: '127.0.0.1',
    smtpPort: sink.port,
    smtpSecure: false,
    smtpUser: '',
    smtpPassword: '',
    smtpTimeoutMs: 5_000,
    mailFrom: 'tickets@stagefront.example',
    sendConcurrency: 2,
  });
  const closeTransport = track('smtp transport', async () => transport.close());
  world = {
    showId,
    seatPool,
    seatAdminUrl: seatDb.url,
    consumerPool: consumers.pool,
    consumerUrl: consumers.url,
    service,
    sink,
    since,
    until,
    orders,
    confirmed: [],
    close: async () => {
      await closeTransport();
      await sink.close();
      await consumers.close();
      await closeService();
      await closeSeat();
    },
  };
  const { rows } = await seatPool.query<OutboxRow>(
    /* sql */ `
    select id::text, aggregatetype, aggregateid, type, payload, ce_source, ce_specversion, ce_time, ce_subject, content_type, ce_dataschema, ce_traceparent,
           (extract(epoch from created_at) * 1000)::float8 as created_ms
      from outbox where created_at >= $1 and created_at < $2 order by created_at, id`,
    [since, until],
  );
  const records = rows.map((row, offset) => routerRecord(row, offset));
  const registry = createSchemaRegistry(stack.registryUrl);
  const definitions = [
    seatAvailabilityConsumer('seat-availability', showId),
    salesLedgerConsumer('sales-ledger', showId),
    confirmationEmailConsumer('confirmation-email', showId, transport, 600_000),
  ];
  for (const definition of definitions) {
    const decoded = await Promise.all(
      records.map((record) => decodeCloudEvent(registry, record, definition.eventTypes)),
    );
    const events = decoded.filter((event): event is ConsumedEvent => event !== undefined);
    const outcome = await applyEffects(
      processingContext(definition, consumers.pool),
      wholePartition,
      events,
      undefined,
    );
    expect(outcome.applied).toHaveLength(events.length);
  }
  const orderConfirmed = catalogueEventTypes(['orderConfirmed'], 'keep-retrying');
  const decodedOrders = await Promise.all(records.map((record) => decodeCloudEvent(registry, record, orderConfirmed)));
  world.confirmed = decodedOrders.filter((event) => event !== undefined);
}, 60_000);

afterAll(async () => {
  await world.close();
});

describe('the rehearsal checks on a consistent run', () => {
  it('all pass, each on what it counted', async () => {
    const checks = await runChecks();
    expect(checks.map((c) => c.name)).toEqual([
      CHECK.oversold,
      CHECK.seats,
      CHECK.ledgerInbox,
      CHECK.emailInbox,
      CHECK.availability,
      CHECK.ledger,
      CHECK.email,
    ]);
    expect(failing(checks)).toEqual([]);
    // 2 + 3 seats sold; seat events: 5 held + 5 sold, 1 held + 1 released, 2 held (the refused hold wrote none).
    expect(detailOf(checks, CHECK.oversold)).toBe(
      '5 seats sold for this show; in the whole database 5 sold, 0 sold twice (seat.sold events per seat)',
    );
    expect(detailOf(checks, CHECK.seats)).toBe('14 of 14 (reconciliation)');
    expect(detailOf(checks, CHECK.ledgerInbox)).toBe('2 of 2 (reconciliation)');
    expect(detailOf(checks, CHECK.emailInbox)).toBe('2 of 2 (reconciliation)');
    expect(detailOf(checks, CHECK.availability)).toBe(
      'A: 2 sold/2 held (read model 2/2), B: 3 sold/0 held (read model 3/0)',
    );
    expect(detailOf(checks, CHECK.ledger)).toBe(`${world.showId}: 2 orders, 5 seats, 155.00 EUR`);
    expect(detailOf(checks, CHECK.email)).toBe('2 emails for 2 orders, 0 missing, 0 duplicates');
  });

  it('a claim younger than the grace is a send in flight: reported, not failed', async () => {
    const order = world.confirmed[0]!;
    const checks = await whileBroken('young claim', async () => {
      await world.consumerPool.query(
        `update inbox set status = 'claimed', completed_at = null, claimed_at = now() where consumer = 'confirmation-email' and event_id = $1`,
        [order.id],
      );
      return async () => {
        await world.consumerPool.query(
          `update inbox set status = 'sent', completed_at = now() where consumer = 'confirmation-email' and event_id = $1`,
          [order.id],
        );
      };
    });
    expect(failing(checks)).toEqual([]);
    expect(detailOf(checks, CHECK.emailInbox)).toBe(
      '1 of 2 (reconciliation), 1 claimed within the claim grace, not sent yet',
    );
    broken.delete('young claim');
  });
});

describe('each check fails when what it guards is broken, and only that check', () => {
  it('a seat sold twice: a second seat.sold event for a sold seat (outside the reconciled window, so no inbox misses it)', async () => {
    const seat = world.orders[0]!.seats[0]!;
    const checks = await whileBroken('seat sold twice', async () => {
      const { rows } = await world.seatPool.query<{ id: string }>(
        /* sql */ `
        insert into outbox (id, aggregatetype, aggregateid, type, payload, ce_source, ce_specversion, ce_time, ce_subject, content_type, ce_dataschema, ce_traceparent)
        select gen_random_uuid(), aggregatetype, aggregateid, type, payload, ce_source, ce_specversion, ce_time, ce_subject, content_type, ce_dataschema, ce_traceparent
          from outbox where type = $1 and aggregateid = $2 returning id::text`,
        [EVENTS.seatSold.type, seat],
      );
      return async () => {
        await world.seatPool.query('delete from outbox where id = $1', [rows[0]!.id]);
      };
    });
    expect(failing(checks)).toEqual([CHECK.oversold]);
    expect(detailOf(checks, CHECK.oversold)).toBe(
      `5 seats sold for this show; in the whole database 5 sold, 1 sold twice (seat.sold events per seat): 1 seats with more than one seat.sold event (${seat})`,
    );
  });

  it('a sale without its seat.sold event', async () => {
    const seat = world.orders[1]!.seats[2]!;
    const checks = await whileBroken('sale without event', async () => {
      const { rows } = await world.seatPool.query<{ id: string; created_at: Date }>(
        `update outbox set type = 'test.moved-away' where type = $1 and aggregateid = $2 returning id::text`,
        [EVENTS.seatSold.type, seat],
      );
      return async () => {
        await world.seatPool.query('update outbox set type = $1 where id = $2', [EVENTS.seatSold.type, rows[0]!.id]);
      };
    });
    // The seat-availability inbox has the event, the outbox no longer publishes one of its types: nothing missing there.
    expect(failing(checks)).toEqual([CHECK.oversold]);
    expect(detailOf(checks, CHECK.oversold)).toMatch(/: 1 sold seats of this show without a seat\.sold event$/);
  });

  it('a read-model row wrong: a sold seat shown as available', async () => {
    const seat = world.orders[0]!.seats[1]!;
    const checks = await whileBroken('read model row', async () => {
      await world.consumerPool.query(
        `update seat_availability_seats set state = 'available', order_id = null where seat_id = $1`,
        [seat],
      );
      return async () => {
        await world.consumerPool.query(
          `update seat_availability_seats set state = 'sold', order_id = $2 where seat_id = $1`,
          [seat, world.orders[0]!.orderId],
        );
      };
    });
    expect(failing(checks)).toEqual([CHECK.availability]);
    expect(detailOf(checks, CHECK.availability)).toBe(
      'A: 2 sold/2 held (read model 1/2), B: 3 sold/0 held (read model 3/0)',
    );
  });

  it('an order added to the ledger twice: its order.confirmed applied again', async () => {
    const order = world.confirmed[1]!;
    const checks = await whileBroken('ledger order twice', async () => {
      const client = await world.consumerPool.connect();
      try {
        await applyConfirmedOrders(client, [order]);
      } finally {
        client.release();
      }
      return async () => {
        await world.consumerPool.query(
          `update sales_ledger_totals set orders = orders - 1, seats = seats - 3, total_cents = total_cents - 7500`,
        );
      };
    });
    expect(failing(checks)).toEqual([CHECK.ledger]);
    expect(JSON.parse(detailOf(checks, CHECK.ledger))).toEqual([
      {
        show_id: world.showId,
        currency: 'EUR',
        ledger: { show_id: world.showId, currency: 'EUR', orders: 3, seats: 8, total_cents: 23_000 },
        seatDatabase: { show_id: world.showId, currency: 'EUR', orders: 2, seats: 5, total_cents: 15_500 },
      },
    ]);
  });

  it('an email never received', async () => {
    const lost = world.confirmed[0]!.id;
    const checks = await whileBroken(
      'email missing',
      async () => async () => undefined,
      received().filter((id) => !id.startsWith(lost)),
    );
    expect(failing(checks)).toEqual([CHECK.email]);
    expect(detailOf(checks, CHECK.email)).toBe('1 emails for 2 orders, 1 missing, 0 duplicates');
  });

  it('an email received twice', async () => {
    const checks = await whileBroken('email twice', async () => async () => undefined, [...received(), received()[1]!]);
    expect(failing(checks)).toEqual([CHECK.email]);
    expect(detailOf(checks, CHECK.email)).toBe('3 emails for 2 orders, 0 missing, 1 duplicates');
  });

  it('an event dropped from an inbox', async () => {
    const order = world.confirmed[1]!;
    const checks = await whileBroken('inbox event dropped', async () => {
      await world.consumerPool.query(
        `update inbox set consumer = 'dropped' where consumer = 'sales-ledger' and event_id = $1`,
        [order.id],
      );
      return async () => {
        await world.consumerPool.query(
          `update inbox set consumer = 'sales-ledger' where consumer = 'dropped' and event_id = $1`,
          [order.id],
        );
      };
    });
    expect(failing(checks)).toEqual([CHECK.ledgerInbox]);
    expect(detailOf(checks, CHECK.ledgerInbox)).toBe(`1 of 2 (reconciliation), missing 1: ${order.id}`);
  });

  it('an email claimed longer ago than the grace and never sent; npm run reconcile says so and exits 3', async () => {
    const order = world.confirmed[0]!;
    const reconcileCli = () =>
      runChildProgram(
        'monitors/reconciliation/main.ts',
        {
          RECONCILE_SEAT_DB_URL: world.seatAdminUrl,
          RECONCILE_CONSUMER_DB_URL: world.consumerUrl,
          RECONCILE_COVERAGE_DB_URL: '',
          RECONCILE_CONSUMERS: 'seat-availability,sales-ledger,confirmation-email',
          RECONCILE_GRACE_MS: '60000',
          LOG_LEVEL: 'warn',
        },
        ['--from', world.since.toISOString(), '--to', world.until.toISOString()],
      );
    const coverage = async () =>
      (await world.seatPool.query<{ n: number }>('select count(*)::int as n from outbox_reconciled')).rows[0]!.n;
    const coveredBefore = await coverage();
    let cli: { code: number | null; output: string } | undefined;
    let text = '';
    const checks = await whileBroken('claimed never sent', async () => {
      await world.consumerPool.query(
        `update inbox set status = 'claimed', completed_at = null, claimed_at = now() - interval '5 minutes' where consumer = 'confirmation-email' and event_id = $1`,
        [order.id],
      );
      text = describeReconciliation(await reconcileRun(world.seatPool, world.consumerPool, world.since, world.until));
      cli = await reconcileCli();
      return async () => {
        await world.consumerPool.query(
          `update inbox set status = 'sent', completed_at = now() where consumer = 'confirmation-email' and event_id = $1`,
          [order.id],
        );
      };
    });
    expect(failing(checks)).toEqual([CHECK.emailInbox]);
    expect(detailOf(checks, CHECK.emailInbox)).toBe(`1 of 2 (reconciliation), claimed and never sent 1: ${order.id}`);
    expect(text).toContain(
      'confirmation-email (confirmation-email): published 2, handled 1, missing 0, claimed not sent 1 (1 past the claim grace: unsent)',
    );
    expect(text).toContain(`    unsent ce_id: ${order.id}\n`);
    expect(cli?.output).toContain(`unsent ce_id: ${order.id}`);
    expect(cli?.output).toContain(
      'UNSENT: some effects were claimed longer ago than the claim grace and never stamped sent',
    );
    expect(cli?.code).toBe(3);
    // Not a clean run: the outbox purge is given no coverage for it.
    expect(await coverage()).toBe(coveredBefore);
    // Mended, the same command is clean and records its coverage.
    const clean = await reconcileCli();
    expect(clean.output).toContain(
      'confirmation-email (confirmation-email): published 2, handled 2, missing 0, claimed not sent 0',
    );
    expect(clean.output).toContain('no gaps: every consumer handled every published event.');
    expect(clean.code).toBe(0);
    expect(await coverage()).toBe(coveredBefore + 1);
  });

  it('mended, every check passes again', async () => {
    expect(failing(await runChecks())).toEqual([]);
  });
});

/** A drill over the whole on-sale (its kill before the first event): the rehearsal's own verdict code on the state now. */
async function drillVerdict(
  checks: Check[],
  run: Partial<DrillRun> = {},
  scope: Partial<DrillScope> = {},
): Promise<DrillRecord> {
  const killedAt = world.since.getTime();
  const [record] = await drillRecords(
    [
      {
        target: 'consumer',
        victim: 'sales-ledger',
        killedAt,
        restartedAt: killedAt + 1_000,
        backAt: killedAt + 2_000,
        caughtUpAt: killedAt + 3_000,
        notes: [],
        ...run,
      },
    ],
    {
      seatPool: world.seatPool,
      consumerPool: world.consumerPool,
      until: world.until,
      finishedAt: world.until.getTime(),
      checks,
      sampler: { peakLag: () => 0 },
      prometheusIntervalMs: 15_000,
      alerts: [],
      freshness: undefined,
      events: [],
      downMs: 2_000,
      judgeFreshness: true,
      ...scope,
    },
  );
  return record!;
}

/** Each drill-verdict case's record, for the reports. */
const brokenDrills = new Map<string, DrillRecord>();

describe("the drill verdict (the rehearsal's own code) fails when the drill did not hold", () => {
  const handledAll = 'seat-availability 14/14, sales-ledger 2/2, confirmation-email 2/2';

  it('holds on the consistent run', async () => {
    const drill = await drillVerdict(await runChecks());
    expect(drill.verdict).toEqual({
      ok: true,
      detail: `sales-ledger: events written from the kill to the end handled ${handledAll} (reconciliation); nothing sold, booked or emailed twice`,
    });
  });

  it('an event dropped from an inbox across the drill', async () => {
    const order = world.confirmed[0]!;
    const mend = async () => {
      await world.consumerPool.query(
        `update inbox set consumer = 'sales-ledger' where consumer = 'dropped' and event_id = $1`,
        [order.id],
      );
    };
    await world.consumerPool.query(
      `update inbox set consumer = 'dropped' where consumer = 'sales-ledger' and event_id = $1`,
      [order.id],
    );
    let drill: DrillRecord;
    try {
      drill = await drillVerdict(await runChecks());
    } finally {
      await mend();
    }
    expect(drill.verdict.ok).toBe(false);
    expect(drill.verdict.detail).toContain('sales-ledger 1/2');
    brokenDrills.set('event dropped', drill);
  });

  it('an order booked twice across the drill (a failing no-double check)', async () => {
    const drill = await drillVerdict(broken.get('ledger order twice')!);
    expect(drill.verdict.ok).toBe(false);
    expect(drill.verdict.detail).toMatch(/; FAILED: sales ledger equals a recompute from the seat database$/);
    brokenDrills.set('order twice', drill);
  });

  it('a part that never came back', async () => {
    const drill = await drillVerdict(await runChecks(), {
      backAt: null,
      caughtUpAt: null,
      notes: ['not healthy in 60 s'],
    });
    expect(drill.verdict.ok).toBe(false);
    expect(drill.verdict.detail).toMatch(/; never came back$/);
    brokenDrills.set('never back', drill);
  });

  it('availability pages stale past the drill’s budget', async () => {
    const killedAt = world.since.getTime();
    // One availability event held in Connect for 38 s, arriving 40 s after the kill: over the consumer drill's 20 s + 2 s down.
    const late = { created: killedAt + 1_000, appended: killedAt + 39_000, received: killedAt + 40_000 };
    const drill = await drillVerdict(
      await runChecks(),
      {},
      {
        finishedAt: killedAt + 120_000,
        freshness: { slowAt: [late.received], receivedAt: [killedAt + 500, late.received, killedAt + 41_000] },
        events: [{ consumer: 'seat-availability', eventId: 'late', completed: null, ...late }],
      },
    );
    expect(drill.freshBudgetMs).toBe(22_000);
    expect(drill.verdict.ok).toBe(false);
    expect(drill.verdict.detail).toMatch(
      /; fresh again \+40\.0 s after the kill, over its 22\.0 s budget, stale mostly in commit → Kafka \(Debezium, Connect, broker\)$/,
    );
    brokenDrills.set('stale past budget', drill);
  });

  it('availability pages still stale when the run ended, however soon within the budget', async () => {
    const killedAt = world.since.getTime();
    // The last availability event before the run ended (at +20 s) took 1.5 s: the pages never came right.
    const last = { created: killedAt + 18_000, appended: killedAt + 18_100, received: killedAt + 19_500 };
    const drill = await drillVerdict(
      await runChecks(),
      {},
      {
        finishedAt: killedAt + 20_000,
        freshness: { slowAt: [last.received], receivedAt: [killedAt + 500, last.received] },
        events: [{ consumer: 'seat-availability', eventId: 'last', completed: null, ...last }],
      },
    );
    expect(drill.staleAtEnd).toBe(true);
    expect(drill.verdict.ok).toBe(false);
    expect(drill.verdict.detail).toMatch(/; never fresh again before the next drill or the end of the run/);
    brokenDrills.set('stale at the end', drill);
  });
});

describe('a failing check in the reports', () => {
  const fixture = fixtureRecord();
  const extras = QUIET_EXTRAS;
  const artifacts = join(stackLayout().home, 'test-artifacts', 'consistency-checks');

  beforeAll(() => {
    if (chromiumCommand() === undefined) throw new Error(`Chromium not found: ${CHROMIUM_HINT}`);
    mkdirSync(artifacts, { recursive: true });
  });

  /** The record of a run whose checks are these, written as the rehearsal writes it: text, JSON and HTML. */
  function written(name: string, checks: Check[]) {
    const record: RehearsalRecord = { ...fixture, showId: name, checks };
    const paths = writeReport(artifacts, record, renderTextReport(record, extras));
    return {
      record,
      text: readFileSync(paths.text, 'utf8'),
      json: JSON.parse(readFileSync(paths.json, 'utf8')) as RehearsalRecord,
      html: paths.html,
    };
  }

  async function htmlVerdict(file: string) {
    const page = await openPage(file, { width: 1200, height: 1600 });
    const close = track('headless Chromium', () => page.close());
    try {
      return await page.evaluate<{ headline: string; failing: boolean; rows: string[][] }>(`({
        headline: document.querySelector('#verdict h2').textContent,
        failing: document.querySelector('#verdict').classList.contains('fail'),
        rows: [...document.querySelectorAll('#verdict tbody tr.fail')].map((tr) => [...tr.querySelectorAll('td')].slice(0, 2).map((td) => td.textContent)),
      })`);
    } finally {
      await close();
    }
  }

  it('every broken case: FAIL and the check in the text report, its verdict line, and ok false in the JSON', () => {
    expect([...broken.keys()].sort()).toEqual([
      'claimed never sent',
      'email missing',
      'email twice',
      'inbox event dropped',
      'ledger order twice',
      'read model row',
      'sale without event',
      'seat sold twice',
    ]);
    for (const [label, checks] of broken) {
      const [bad] = checks.filter((c) => !c.ok);
      const { text, json } = written(`checks-${label.replace(/ /g, '-')}`, checks);
      expect(text, label).toContain(`  FAIL  ${bad!.name}: ${bad!.detail}\n`);
      expect(text.match(/^ {2}FAIL {2}/gm), label).toHaveLength(1);
      expect(text, label).toContain(`  FAIL: 1 of ${checks.length} checks failed, 2 drills held\n`);
      expect(
        json.checks.filter((c) => !c.ok),
        label,
      ).toEqual([bad]);
    }
  });

  it('the HTML report heads with the failure and marks each failing check FAIL, in Chromium; a passing run for contrast', async () => {
    const all = written(
      'checks-all-failing',
      [...broken.values()].map((checks) => checks.find((c) => !c.ok)!),
    );
    const every = await htmlVerdict(all.html);
    expect(every.headline).toBe('8 of 8 checks failed, 2 drills held');
    expect(every.failing).toBe(true);
    expect(every.rows).toEqual(all.record.checks.map((c) => ['FAIL', c.name]));
    // The same markup, read as text (one browser start per file is slow): one failing check, then none.
    const verdictOf = (file: string) =>
      /<section id="verdict" class="verdict (ok|fail)">\s*<h2>([^<]*)<\/h2>/.exec(readFileSync(file, 'utf8'))?.slice(1);
    const one = written('checks-one-failing', broken.get('seat sold twice')!);
    expect(verdictOf(one.html)).toEqual(['fail', '1 of 7 checks failed, 2 drills held']);
    expect(
      readFileSync(one.html, 'utf8').match(/<tr class="fail"><td class="mark">FAIL<\/td><td>[^<]*<\/td>/g),
    ).toEqual([`<tr class="fail"><td class="mark">FAIL</td><td>${CHECK.oversold}</td>`]);
    const passing = written('checks-passing', await runChecks());
    expect(passing.text).toContain('  PASS: All 7 checks passed, 2 drills held\n');
    expect(verdictOf(passing.html)).toEqual(['ok', 'All 7 checks passed, 2 drills held']);
  });
});

describe('a failing drill verdict in the reports (no browser: the HTML read as text)', () => {
  const fixture = fixtureRecord();
  const artifacts = join(stackLayout().home, 'test-artifacts', 'consistency-checks');
  const extras = QUIET_EXTRAS;
  function written(name: string, checks: Check[], drills: DrillRecord[]) {
    mkdirSync(artifacts, { recursive: true });
    const record: RehearsalRecord = { ...fixture, showId: name, checks, drills };
    const paths = writeReport(artifacts, record, renderTextReport(record, extras));
    return {
      text: readFileSync(paths.text, 'utf8'),
      json: JSON.parse(readFileSync(paths.json, 'utf8')) as RehearsalRecord,
      html: paths.html,
    };
  }

  it("every failing drill verdict: FAIL in the text report's drill lines and verdict, ok false in the JSON, a fail row in the HTML", () => {
    expect([...brokenDrills.keys()].sort()).toEqual([
      'event dropped',
      'never back',
      'order twice',
      'stale at the end',
      'stale past budget',
    ]);
    const passing = fixture.checks.map((c) => ({ ...c, ok: true }));
    for (const [label, drill] of brokenDrills) {
      const { text, json, html } = written(`drill-${label.replace(/ /g, '-')}`, passing, [fixture.drills[0]!, drill]);
      expect(text, label).toContain(`      FAIL  ${drill.verdict.detail}\n`);
      expect(text, label).toContain(`  FAIL: All ${passing.length} checks passed, 1 of 2 drills did not hold\n`);
      expect(text, label).not.toContain('PASS:');
      expect(
        json.drills.map((d) => d.verdict.ok),
        label,
      ).toEqual([true, false]);
      const page = readFileSync(html, 'utf8');
      expect(
        /<section id="verdict" class="verdict (ok|fail)">\s*<h2>([^<]*)<\/h2>/.exec(page)?.slice(1),
        label,
      ).toEqual(['fail', `All ${passing.length} checks passed, 1 of 2 drills did not hold`]);
      const drillRows = /<section id="drills">[\s\S]*?<\/section>/.exec(page)?.[0] ?? '';
      expect(drillRows.match(/<tr class="(ok|fail)">/g), label).toEqual(['<tr class="ok">', '<tr class="fail">']);
      expect(drillRows, label).toContain('<span class="mark">FAIL</span>');
    }
  });
});
