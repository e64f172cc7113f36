import { describe, expect, it } from 'vitest';
import { type OrderConfirmed, topicFor } from '../../events/catalogue.js';
import { runMigrations } from '../../lib/migrations.js';
import { type Pool, createPool } from '../../lib/postgres.js';
import { waitFor } from '../../lib/wait.js';
import { compareTotals, totalsFromLedger, totalsFromSeatDatabase } from '../../consumers/sales-ledger/recompute.js';
import { produceCloudEvents } from '../support/cloudevent-records.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { createTestDatabase, requireStack, uniqueName } from '../support/stack.js';
import { catalogueEvent, catalogueSchemaIds } from './helpers/catalogue-events.js';
import { runChildProgram, startChildProgram } from './helpers/child-consumer.js';
import {
  connectedProducer,
  consumerDatabase,
  createTopics,
  testKafka,
  testLogger,
  testRegistry,
} from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();
const ORDERS = 600;

/** A seat database with 3 shows and ORDERS confirmed orders of 2 seats each. */
async function seatDatabaseWithOrders(): Promise<{ url: string; pool: Pool; close: () => Promise<void> }> {
  const db = await createTestDatabase('seatdb');
  const pool = createPool({
    connectionString: db.url,
    applicationName: 'ledger-test',
    logger: testLogger('pool'),
    max: 2,
  });
  const close = track('seat database', async () => {
    await pool.end();
    await db.drop();
  });
  await runMigrations({ pool, folder: 'seat-service/migrations' });
  await pool.query(/* sql */ `
    insert into shows select 'show-' || i, 'Show ' || i, now() + interval '30 days', now() from generate_series(1, 3) i;
    insert into seats (seat_id, show_id, section, row_label, seat_number, price_cents)
      select 'seat-' || n, 'show-' || (n % 3 + 1), 'A', 'R', n + 1, 4500 from generate_series(0, ${2 * ORDERS - 1}) n;
    insert into holds (hold_id, show_id, buyer_id, created_at, expires_at, status, closed_at)
      select md5('h' || o)::uuid, 'show-' || (o % 3 + 1), 'buyer', now() - interval '1 minute', now() + interval '9 minutes', 'confirmed', now()
        from generate_series(0, ${ORDERS - 1}) o;
    insert into orders (order_id, hold_id, show_id, buyer_id, buyer_email, total_cents)
      select md5('o' || o)::uuid, md5('h' || o)::uuid, 'show-' || (o % 3 + 1), 'buyer', 'buyer@example.com', 9000 + o from generate_series(0, ${ORDERS - 1}) o;
    insert into order_seats select 'seat-' || (2 * o + k), md5('o' || o)::uuid, 4500 from generate_series(0, ${ORDERS - 1}) o, generate_series(0, 1) k;`);
  return { url: db.url, pool, close };
}

async function confirmedOrders(pool: Pool): Promise<OrderConfirmed[]> {
  const result = await pool.query<OrderConfirmed>(/* sql */ `
    select o.order_id::text, o.show_id, o.hold_id::text, o.buyer_id, o.buyer_email, array_agg(s.seat_id order by s.seat_id) as seat_ids,
           o.total_cents, o.currency, (extract(epoch from o.created_at) * 1000)::float8 as confirmed_at
      from orders o join order_seats s using (order_id) group by o.order_id order by o.order_id`);
  return result.rows.map((row) => ({ ...row, confirmed_at: Math.round(row.confirmed_at) }));
}

describe('sales ledger', () => {
  it('survives kill -9 mid-stream without losing or doubling a sale, and recompute matches the seat database', async () => {
    const name = uniqueName('ledger');
    const topic = topicFor(name, 'order');
    const kafka = testKafka(stack, name);
    const registry = testRegistry(stack);
    await createTopics(kafka, [topic], 3);
    const consumerDb = await consumerDatabase('ledger');
    const seatDb = await seatDatabaseWithOrders();
    const ids = await catalogueSchemaIds(registry);
    const { producer, close: closeProducer } = await connectedProducer(kafka);
    const orders = await confirmedOrders(seatDb.pool);
    for (let from = 0; from < orders.length; from += 10) {
      await produceCloudEvents(
        producer,
        registry,
        topic,
        orders.slice(from, from + 10).map((o) => catalogueEvent(ids, 'orderConfirmed', o)),
      );
    }
    const env = {
      CONSUMER_DATABASE_URL: consumerDb.url,
      KAFKA_BROKERS: stack.kafkaBrokers.join(','),
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      TOPIC_PREFIX: name,
      CONSUMER_GROUP_ID: name,
      METRICS_PORT: '0',
      FETCH_MAX_BYTES_PER_PARTITION: '1024',
      LOG_LEVEL: 'warn',
    };
    const inboxCount = async (): Promise<number> =>
      (await consumerDb.pool.query('select count(*)::int as n from inbox')).rows[0].n as number;

    const first = startChildProgram('consumers/sales-ledger/main.ts', env);
    const seenAtKill = await waitFor(
      async () => {
        const n = await inboxCount();
        return n >= 30 && n;
      },
      { timeoutMs: 60_000, intervalMs: 20, description: 'the first consumer part way through' },
    );
    await first.killHard();
    const appliedBeforeRestart = await inboxCount();
    expect(appliedBeforeRestart).toBeLessThan(ORDERS);

    const second = startChildProgram('consumers/sales-ledger/main.ts', env);
    await waitFor(async () => (await inboxCount()) === ORDERS, {
      timeoutMs: 90_000,
      description: `all ${ORDERS} orders in the inbox; killed at ${seenAtKill}`,
    });
    await second.close();
    expect(second.process.exitCode).toBe(0);

    const differences = compareTotals(
      await totalsFromLedger(consumerDb.pool),
      await totalsFromSeatDatabase(seatDb.pool),
    );
    expect(differences).toEqual([]);
    const recomputeEnv = { CONSUMER_DATABASE_URL: consumerDb.url, SEAT_DATABASE_URL: seatDb.url };
    const matching = await runChildProgram('consumers/sales-ledger/recompute-main.ts', recomputeEnv);
    expect(matching).toMatchObject({ code: 0 });
    expect(matching.output).toContain('matches the seat database (3 show totals compared)');

    await consumerDb.pool.query(`update sales_ledger_totals set orders = orders + 1 where show_id = 'show-2'`);
    const differing = await runChildProgram('consumers/sales-ledger/recompute-main.ts', recomputeEnv);
    expect(differing.code).toBe(1);
    expect(differing.output).toMatch(/show-2 EUR: ledger orders 201, .* \| seat database orders 200,/);
    await Promise.all([consumerDb.close(), seatDb.close(), closeProducer()]);
  });
});
