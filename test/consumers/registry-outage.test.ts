/**
 * A schema registry outage costs nothing once the pipeline runs: the seat service and the consumers
 * reach the real registry through a proxy that then goes silent for good (every connection, open or
 * new, accepted and never answered, as a hung or unreachable registry is). Sales go on without an
 * error, and the seat availability and sales ledger consumers apply every event from the schemas
 * they already hold: they never meet a failure, nothing is dead-lettered, and each inbox and read
 * model equals the seat database. Had anything needed the registry, the proxy would have held it
 * until the registry request timed out, and the consumer would have held its partition for good.
 */
import { describe, expect, it } from 'vitest';
import { readDeadLetters } from '../../consumers/redrive/read-dead-letters.js';
import { RuntimeEvents } from '../../consumers/runtime/lifecycle.js';
import { migrateConsumerDatabase } from '../../consumers/runtime/migrations.js';
import type { ConsumerDefinition, DeliveryPolicy } from '../../consumers/runtime/types.js';
import { salesLedgerConsumer } from '../../consumers/sales-ledger/consumer.js';
import { seatAvailabilityConsumer } from '../../consumers/seat-availability/consumer.js';
import { deadLetterTopicFor } from '../../events/catalogue.js';
import { createPool } from '../../lib/postgres.js';
import { createSchemaRegistry } from '../../lib/schema-registry.js';
import { waitFor } from '../../lib/wait.js';
import { seatId } from '../../seat-service/inventory.js';
import { openSeatService, type SeatService } from '../../seat-service/service.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { useSeatPipeline } from '../support/seat-pipeline.js';
import { startSilentProxy } from '../support/silent-proxy.js';
import { requireStack } from '../support/stack.js';
import { createRoleDatabase } from './helpers/drill.js';
import { allHandled, handledIds, inboxIds, outboxRows } from './helpers/handled-events.js';
import { startTrackedConsumer, testKafka, testLogger } from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();

const POLICY: DeliveryPolicy = {
  deadlineMs: 300_000,
  lateRetryWindowMs: 5_000,
  deliveryLimit: 3,
  retryBaseMs: 100,
  retryCapMs: 1_000,
};
const SHOW = 'regout1';

/** Row `row` of section A: seats 1-2 held and confirmed, seats 3-4 held and released, seat 5 left held. */
async function sellRow(service: SeatService, row: number): Promise<void> {
  const sold = await service.hold({
    showId: SHOW,
    seatIds: [1, 2].map((n) => seatId(SHOW, 'A', row, n)),
    buyerId: `b${row}`,
  });
  if (sold.status !== 'held') throw new Error(`row ${row}: expected a hold, got ${sold.status}`);
  const confirmed = await service.confirm({ holdId: sold.holdId, buyerEmail: `buyer-${row}@example.test` });
  if (confirmed.status !== 'confirmed') throw new Error(`row ${row}: expected a confirmation, got ${confirmed.status}`);
  const back = await service.hold({
    showId: SHOW,
    seatIds: [3, 4].map((n) => seatId(SHOW, 'A', row, n)),
    buyerId: `r${row}`,
  });
  if (back.status !== 'held') throw new Error(`row ${row}: expected a hold, got ${back.status}`);
  const released = await service.release(back.holdId);
  if (released.status !== 'released') throw new Error(`row ${row}: expected a release, got ${released.status}`);
  const open = await service.hold({ showId: SHOW, seatIds: [seatId(SHOW, 'A', row, 5)], buyerId: `o${row}` });
  if (open.status !== 'held') throw new Error(`row ${row}: expected an open hold, got ${open.status}`);
}

describe('a schema registry that stops answering while the pipeline runs', () => {
  const pipeline = useSeatPipeline(SHOW, { section: 'A', rows: 4, seatsPerRow: 6, priceCents: 4500 });

  it(
    'costs nothing: sales go on without an error, and the consumers apply every event from the schemas they hold',
    { timeout: 120_000 },
    async () => {
      const { serviceConfig, topics, adminUrl } = pipeline();
      const prefix = topics.seat.replace(/\.seat$/, '');
      const proxy = await startSilentProxy(Number(new URL(stack.registryUrl).port));
      // The seat service and the consumers reach the registry only through the proxy.
      const service = await openSeatService(
        { ...serviceConfig, registryUrl: proxy.through(stack.registryUrl) },
        testLogger('service'),
      );
      const closeService = track('seat service through the proxy', () => service.close());
      const registry = createSchemaRegistry(proxy.through(stack.registryUrl));
      const db = await createRoleDatabase(stack.postgresAdminUrl, 'registryout');
      const pool = createPool({
        connectionString: db.roleUrl,
        applicationName: 'registry-outage',
        logger: testLogger('pool'),
        max: 4,
      });
      const closeDatabase = track(`consumer database ${db.name}`, async () => {
        await pool.end();
        await db.drop();
      });
      const definitions: ConsumerDefinition[] = [
        seatAvailabilityConsumer(`${prefix}-seats`, prefix),
        salesLedgerConsumer(`${prefix}-ledger`, prefix),
      ];
      const kafka = testKafka(stack, 'registry-outage');
      const failures: string[] = [];
      const consumers = [];
      for (const definition of definitions) {
        await migrateConsumerDatabase(pool, definition, testLogger('migrate'));
        const events = new RuntimeEvents();
        events.on('failing', ({ code }) => failures.push(`${definition.name}: ${code}`));
        events.on('crashed', ({ error }) => failures.push(`${definition.name} crashed: ${String(error)}`));
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

      // Before the outage: row 1 sold and handled, so every schema has been fetched once.
      await sellRow(service, 1);
      await waitFor(handled, { timeoutMs: 60_000, description: 'the first sales handled by both consumers' });
      expect(proxy.counts().forwarded).toBeGreaterThan(0);

      // The outage: the registry never answers again; rows 2 to 4 are sold meanwhile.
      proxy.silence();
      for (const row of [2, 3, 4]) await sellRow(service, row);
      await waitFor(handled, {
        timeoutMs: 60_000,
        description: 'every sale handled by both consumers, the registry silent',
      });

      for (const running of consumers) await running.close();
      const rows = await outboxRows(adminUrl);
      for (const definition of definitions)
        expect(await inboxIds(pool, definition.name), definition.name).toEqual(handledIds(definition, rows));
      expect(failures).toEqual([]);
      for (const topic of [topics.seat, topics.order])
        expect(await readDeadLetters(kafka, deadLetterTopicFor(topic)), topic).toEqual([]);
      const sold = await pool.query<{ n: number }>(
        "select count(*)::int as n from seat_availability_seats where state = 'sold'",
      );
      expect(sold.rows[0]?.n).toBe(8);
      const ledger = await pool.query<{ orders: number; seats: number }>(
        'select orders, seats from sales_ledger_totals',
      );
      expect(ledger.rows).toEqual([{ orders: 4, seats: 8 }]);

      await closeDatabase();
      await closeService();
      await proxy.close();
    },
  );
});
