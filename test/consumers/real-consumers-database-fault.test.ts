/**
 * The real consumers (seat availability, sales ledger, confirmation email) meet a consumer database
 * fault, fed by the real pipeline: sales through the seat service → outbox → Debezium → Kafka, so
 * every record is the router's own (ce_dataschema, ce_traceparent and all). The consumers' database
 * turns read-only (default_transaction_read_only, as on a standby, its sessions ended) while sales go
 * on, then writable again. Each consumer is shown to have met the fault (a `failing` 25006); then,
 * once Kafka (read by a separate client) holds every outbox row and each group's committed offsets
 * sit at the end of its topics, the read models are compared with the seat database: every seat's
 * state, the ledger's orders, seats and totals per show, one email per order, nothing dead-lettered.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { confirmationEmailConsumer } from '../../consumers/confirmation-email/consumer.js';
import { createEmailSender, messageIdFor } from '../../consumers/confirmation-email/send-confirmation.js';
import { readDeadLetters } from '../../consumers/redrive/read-dead-letters.js';
import { RuntimeEvents } from '../../consumers/runtime/lifecycle.js';
import { migrateConsumerDatabase } from '../../consumers/runtime/migrations.js';
import type { ConsumerDefinition, DeliveryPolicy } from '../../consumers/runtime/types.js';
import { salesLedgerConsumer } from '../../consumers/sales-ledger/consumer.js';
import { seatAvailabilityConsumer } from '../../consumers/seat-availability/consumer.js';
import { deadLetterTopicFor } from '../../events/catalogue.js';
import type { Kafka } from '../../lib/kafka.js';
import { createPool } from '../../lib/postgres.js';
import { waitFor } from '../../lib/wait.js';
import { seatId } from '../../seat-service/inventory.js';
import type { SeatService } from '../../seat-service/service.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { collectRecords, useSeatPipeline } from '../support/seat-pipeline.js';
import { adminQuery, requireStack } from '../support/stack.js';
import { createRoleDatabase } from './helpers/drill.js';
import { allHandled, handledIds, inboxIds, outboxRows } from './helpers/handled-events.js';
import { startSmtpSink } from './helpers/smtp-sink.js';
import { startTrackedConsumer, testKafka, testLogger, testRegistry } from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();

/** A deadline far past the fault: a record that fails during it must be held and retried, never dead-lettered. */
const POLICY: DeliveryPolicy = {
  deadlineMs: 300_000,
  lateRetryWindowMs: 5_000,
  deliveryLimit: 3,
  retryBaseMs: 100,
  retryCapMs: 1_000,
};
const SHOW = 'dbfault1';
const MAIL_FROM = 'tickets@stagefront.example';

/** Sells row `row` of section A: holds seats 1-2 and 3-4, confirms the first hold, releases the second. */
async function sellRow(service: SeatService, row: number): Promise<void> {
  const held = [];
  for (const first of [1, 3]) {
    const hold = await service.hold({
      showId: SHOW,
      seatIds: [seatId(SHOW, 'A', row, first), seatId(SHOW, 'A', row, first + 1)],
      buyerId: `buyer-${row}-${first}`,
    });
    if (hold.status !== 'held') throw new Error(`row ${row}: expected a hold, got ${hold.status}`);
    held.push(hold.holdId);
  }
  const confirmed = await service.confirm({ holdId: held[0]!, buyerEmail: `buyer-${row}@example.test` });
  if (confirmed.status !== 'confirmed') throw new Error(`row ${row}: expected a confirmation, got ${confirmed.status}`);
  const released = await service.release(held[1]!);
  if (released.status !== 'released') throw new Error(`row ${row}: expected a release, got ${released.status}`);
  // Seat 5 stays held: the read model must show a hold that neither sold nor ended.
  const open = await service.hold({ showId: SHOW, seatIds: [seatId(SHOW, 'A', row, 5)], buyerId: `open-${row}` });
  if (open.status !== 'held') throw new Error(`row ${row}: expected an open hold, got ${open.status}`);
}

/** Waits until each group's committed offset is the end of every partition of its topics. */
async function waitForCommittedAtEnd(kafka: Kafka, groups: { groupId: string; topics: string[] }[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await waitFor(
      async () => {
        for (const { groupId, topics } of groups) {
          const committed = await admin.fetchOffsets({ groupId, topics });
          for (const topic of topics) {
            const ends = await admin.fetchTopicOffsets(topic);
            const ofTopic = committed.find((c) => c.topic === topic)?.partitions ?? [];
            for (const { partition, high } of ends) {
              const at = ofTopic.find((p) => p.partition === partition)?.offset ?? '-1';
              if (BigInt(high) > 0n && at !== high) return false;
            }
          }
        }
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 250, description: 'every group committed at the end of its topics' },
    );
  } finally {
    await admin.disconnect();
  }
}

describe('the real consumers meet a consumer database fault', () => {
  const pipeline = useSeatPipeline(SHOW, { section: 'A', rows: 3, seatsPerRow: 6, priceCents: 4500 });

  it(
    'read-only under real sales: each consumer held and retried, and every read model equals the seat database',
    { timeout: 120_000 },
    async () => {
      const { service, topics, adminUrl } = pipeline();
      const prefix = topics.seat.replace(/\.seat$/, '');
      const db = await createRoleDatabase(stack.postgresAdminUrl, 'realfault');
      const pool = createPool({
        connectionString: db.roleUrl,
        applicationName: 'real-consumers-fault',
        logger: testLogger('pool'),
        max: 6,
        connectionTimeoutMs: 2_000,
      });
      const closeDatabase = track(`consumer database ${db.name}`, async () => {
        await pool.end();
        await db.drop();
      });
      const smtp = await startSmtpSink();
      const transport = createEmailSender({
        smtpHost: '127.0.0.1',
        smtpPort: smtp.port,
        smtpSecure: false,
        smtpUser: '',
        smtpPassword: '',
        smtpTimeoutMs: 5_000,
        mailFrom: MAIL_FROM,
        sendConcurrency: 2,
      });
      const closeTransport = track('smtp transport', () => transport.close());
      const definitions: ConsumerDefinition[] = [
        seatAvailabilityConsumer(`${prefix}-seats`, prefix),
        salesLedgerConsumer(`${prefix}-ledger`, prefix),
        confirmationEmailConsumer(`${prefix}-email`, prefix, transport, 60_000),
      ];
      const kafka = testKafka(stack, 'real-consumers-fault');
      const registry = testRegistry(stack);
      const failingCodes = new Map<string, Set<string>>();
      const crashes: unknown[] = [];
      const consumers = [];
      for (const definition of definitions) {
        await migrateConsumerDatabase(pool, definition, testLogger('migrate'));
        const events = new RuntimeEvents();
        failingCodes.set(definition.name, new Set());
        events.on('failing', ({ code }) => failingCodes.get(definition.name)!.add(code));
        events.on('crashed', ({ error }) => crashes.push(error));
        const running = await startTrackedConsumer({
          definition,
          kafka,
          groupId: definition.name,
          registry,
          pool,
          logger: testLogger(definition.name),
          policy: POLICY,
          events,
          sessionTimeoutMs: 6_000,
        });
        consumers.push(running);
        await waitFor(() => running.isReady(), { timeoutMs: 60_000, description: `${definition.name} joined` });
      }
      const handled = () => allHandled(adminUrl, pool, definitions);

      // Warm-up: row 1 sold, handled by all three before the fault.
      await sellRow(service, 1);
      await waitFor(handled, { timeoutMs: 60_000, description: 'the warm-up sales handled by every consumer' });

      // The fault: read-only, every session of the consumers' role ended; row 2 sold meanwhile.
      const database = pg.escapeIdentifier(db.name);
      await adminQuery(stack.postgresAdminUrl, `alter database ${database} set default_transaction_read_only = on`);
      await db.dropSessions();
      await sellRow(service, 2);
      await waitFor(() => definitions.every((d) => failingCodes.get(d.name)!.has('25006')), {
        timeoutMs: 60_000,
        description: `every consumer failing with 25006 (read-only); seen: ${JSON.stringify([...failingCodes].map(([n, c]) => [n, [...c]]))}`,
      });
      await adminQuery(stack.postgresAdminUrl, `alter database ${database} reset default_transaction_read_only`);
      await db.dropSessions();
      await sellRow(service, 3);

      // Every outbox row on Kafka (a separate reader), then every group committed at the end.
      const outbox = await outboxRows(adminUrl);
      const collector = await collectRecords([topics.seat, topics.order]);
      await waitFor(() => collector.records.length >= outbox.length, {
        timeoutMs: 60_000,
        description: `all ${outbox.length} outbox rows on Kafka`,
      });
      await collector.stop();
      expect(collector.records.map((r) => r.headers.ce_id).sort()).toEqual(outbox.map((r) => r.id).sort());
      await waitForCommittedAtEnd(
        kafka,
        definitions.map((d) => ({ groupId: d.name, topics: [...d.topics] })),
      );
      for (const running of consumers) await running.close();
      expect(crashes).toEqual([]);

      // Each inbox holds exactly the outbox rows of the types its consumer handles.
      for (const definition of definitions)
        expect(await inboxIds(pool, definition.name), definition.name).toEqual(handledIds(definition, outbox));

      // Seat availability: every seat of the show as the seat database has it (a seat never seen is available).
      const seatDatabase = await adminQuery(
        adminUrl,
        /* sql */ `select s.seat_id, s.state, os.order_id::text as order_id
           from seats s left join order_seats os using (seat_id) where s.show_id = $1 order by s.seat_id`,
        [SHOW],
      );
      const model = await pool.query<{ seat_id: string; state: string; order_id: string | null }>(
        'select seat_id, state, order_id from seat_availability_seats',
      );
      const modelOf = new Map(model.rows.map((row) => [row.seat_id, row]));
      const seen = seatDatabase.rows.map((row: { seat_id: string }) => {
        const kept = modelOf.get(row.seat_id);
        return { seat_id: row.seat_id, state: kept?.state ?? 'available', order_id: kept?.order_id ?? null };
      });
      expect(seen).toEqual(seatDatabase.rows);
      expect(seatDatabase.rows.filter((r: { state: string }) => r.state === 'sold')).toHaveLength(6);
      expect(seatDatabase.rows.filter((r: { state: string }) => r.state === 'held')).toHaveLength(3);
      expect(model.rows.map((r) => r.seat_id).every((id) => id.startsWith(`${SHOW}:`))).toBe(true);

      // Sales ledger: orders, seats and money per show, counted from the seat database's own tables.
      const fromSeatDatabase = await adminQuery(
        adminUrl,
        /* sql */ `select o.show_id, o.currency, count(distinct o.order_id)::int as orders,
                  count(os.seat_id)::int as seats, sum(os.price_cents)::bigint::text as total_cents
             from orders o join order_seats os using (order_id) group by o.show_id, o.currency order by o.show_id`,
      );
      const ledger = await pool.query(
        'select show_id, currency, orders, seats, total_cents::text from sales_ledger_totals order by show_id',
      );
      expect(ledger.rows).toEqual(fromSeatDatabase.rows);
      expect(fromSeatDatabase.rows).toEqual([
        { show_id: SHOW, currency: 'EUR', orders: 3, seats: 6, total_cents: String(6 * 4500) },
      ]);

      // Confirmation email: one per order, to its buyer, with the event's Message-ID; every claim stamped sent.
      const orders = await adminQuery(
        adminUrl,
        /* sql */ `select x.id::text as event_id, o.buyer_email from outbox x
           join orders o on o.order_id::text = x.aggregateid where x.type = 'com.stagefront.order.confirmed' order by 1`,
      );
      expect(orders.rows).toHaveLength(3);
      const mails = smtp.received
        .map((m) => ({ messageId: m.messageId, to: m.to }))
        .sort((a, b) => (a.messageId < b.messageId ? -1 : 1));
      expect(mails).toEqual(
        orders.rows
          .map((o: { event_id: string; buyer_email: string }) => ({
            messageId: messageIdFor(o.event_id),
            to: [o.buyer_email],
          }))
          .sort((a: { messageId: string }, b: { messageId: string }) => (a.messageId < b.messageId ? -1 : 1)),
      );
      const unsent = await pool.query("select event_id from inbox where consumer = $1 and status <> 'sent'", [
        definitions[2]!.name,
      ]);
      expect(unsent.rows).toEqual([]);

      // Nothing dead-lettered (the runtime created both dead letter topics at start).
      for (const topic of [topics.seat, topics.order])
        expect(await readDeadLetters(kafka, deadLetterTopicFor(topic)), topic).toEqual([]);

      await Promise.all([closeTransport(), smtp.close()]);
      await closeDatabase();
    },
  );
});
