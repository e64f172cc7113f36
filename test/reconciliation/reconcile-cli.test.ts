/**
 * `npm run reconcile -- --from … --to …`, one row per window, on a seat database whose outbox
 * holds three events at known times, one of them missing from its consumer's inbox: a window that
 * includes the unhandled event exits 3 and names it, one that excludes it exits 0 and records its
 * coverage for the outbox purge (read back from outbox_reconciled); bad arguments exit 2 with a
 * sentence, and record nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../lib/postgres.js';
import { migrateSeatDatabase } from '../../seat-service/database-setup.js';
import { runChildProgram } from '../consumers/helpers/child-consumer.js';
import { consumerDatabase, testLogger } from '../consumers/helpers/stack-fixture.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { adminQuery, createTestDatabase, requireStack } from '../support/stack.js';

requireStack();
installLeakGuard();

const EVENTS = {
  sold: { id: randomUUID(), type: 'com.stagefront.order.confirmed', at: '2026-11-01T09:00:00Z', aggregate: 'order' },
  handled: { id: randomUUID(), type: 'com.stagefront.seat.held', at: '2026-11-01T10:00:00Z', aggregate: 'seat' },
  unhandled: { id: randomUUID(), type: 'com.stagefront.seat.held', at: '2026-11-01T11:00:00Z', aggregate: 'seat' },
};

let seat: Awaited<ReturnType<typeof createTestDatabase>>;
let consumers: Awaited<ReturnType<typeof consumerDatabase>>;

beforeAll(async () => {
  seat = await createTestDatabase('reconcile_cli');
  const admin = createPool({ connectionString: seat.url, applicationName: 'test', logger: testLogger('pool'), max: 1 });
  try {
    await migrateSeatDatabase(admin, testLogger('migrate'));
  } finally {
    await admin.end();
  }
  for (const event of Object.values(EVENTS))
    await adminQuery(
      seat.url,
      `insert into outbox (id, aggregatetype, aggregateid, type, payload, ce_source, ce_time, ce_subject, created_at)
       values ($1, $2, 'k', $3, '\\x00', 'test', $4, 'k', $5)`,
      [event.id, event.aggregate, event.type, event.at, event.at],
    );
  consumers = await consumerDatabase('reconcile_cli');
  const inbox = (consumer: string, id: string, type: string, status: string) =>
    consumers.pool.query(
      `insert into inbox (consumer, event_id, event_type, source_topic, source_partition, source_offset, status)
       values ($1, $2, $3, 't', 0, 0, $4)`,
      [consumer, id, type, status],
    );
  await inbox('seat-availability', EVENTS.handled.id, EVENTS.handled.type, 'applied');
  await inbox('sales-ledger', EVENTS.sold.id, EVENTS.sold.type, 'applied');
  await inbox('confirmation-email', EVENTS.sold.id, EVENTS.sold.type, 'sent');
}, 60_000);
afterAll(async () => {
  await consumers?.close();
  await seat?.drop();
});

const coverage = async () =>
  (
    await adminQuery(
      seat.url,
      `select covered_from, covered_to, consumers from outbox_reconciled order by covered_from`,
    )
  ).rows.map((r: { covered_from: Date; covered_to: Date; consumers: string[] }) => ({
    from: r.covered_from.toISOString(),
    to: r.covered_to.toISOString(),
    consumers: [...r.consumers].sort(),
  }));
const EVERY_CONSUMER = ['confirmation-email', 'sales-ledger', 'seat-availability'];

interface Row {
  name: string;
  args: string[];
  exit: number;
  says: RegExp[];
  saysNot?: RegExp[];
  /** outbox_reconciled afterwards. */
  covered: { from: string; to: string; consumers: string[] }[];
}

const CLEAN = { from: '2026-11-01T08:00:00.000Z', to: '2026-11-01T10:30:00.000Z', consumers: EVERY_CONSUMER };

const ROWS: Row[] = [
  {
    name: 'a window that includes the unhandled event: exit 3, its ce_id named, no coverage recorded',
    args: ['--from', '2026-11-01T09:30:00Z', '--to', '2026-11-01T12:00:00Z'],
    exit: 3,
    says: [new RegExp(EVENTS.unhandled.id)],
    saysNot: [new RegExp(EVENTS.handled.id)],
    covered: [],
  },
  {
    name: 'a window that ends before it: exit 0, the window recorded as covered by every consumer',
    args: ['--from', CLEAN.from, '--to', CLEAN.to],
    exit: 0,
    says: [],
    saysNot: [new RegExp(EVENTS.unhandled.id)],
    covered: [CLEAN],
  },
  {
    name: 'a window that starts after it: exit 0',
    args: ['--from', '2026-11-01T11:00:00.001Z', '--to', '2026-11-01T12:00:00Z'],
    exit: 0,
    says: [],
    covered: [CLEAN, { from: '2026-11-01T11:00:00.001Z', to: '2026-11-01T12:00:00.000Z', consumers: EVERY_CONSUMER }],
  },
  {
    name: 'a window whose --from is its very time (from is inclusive): exit 3',
    args: ['--from', EVENTS.unhandled.at, '--to', '2026-11-01T11:00:00.001Z'],
    exit: 3,
    says: [new RegExp(EVENTS.unhandled.id)],
    covered: [CLEAN, { from: '2026-11-01T11:00:00.001Z', to: '2026-11-01T12:00:00.000Z', consumers: EVERY_CONSUMER }],
  },
  {
    name: 'a window whose --to is its very time (to is exclusive): exit 0',
    args: ['--from', '2026-11-01T10:30:00Z', '--to', EVENTS.unhandled.at],
    exit: 0,
    says: [],
    covered: [
      CLEAN,
      { from: '2026-11-01T10:30:00.000Z', to: '2026-11-01T11:00:00.000Z', consumers: EVERY_CONSUMER },
      { from: '2026-11-01T11:00:00.001Z', to: '2026-11-01T12:00:00.000Z', consumers: EVERY_CONSUMER },
    ],
  },
];
const AFTER_WINDOWS = ROWS[ROWS.length - 1]!.covered;
ROWS.push(
  {
    name: 'a time without an offset: exit 2, how to write it',
    args: ['--from', '2026-11-01T09:00:00', '--to', '2026-11-01T12:00:00Z'],
    exit: 2,
    says: [
      /--from 2026-11-01T09:00:00 is not an ISO 8601 time with an offset; write e\.g\. --from 2026-11-29T10:00:00Z/,
    ],
    covered: AFTER_WINDOWS,
  },
  {
    name: '--to without a value: exit 2',
    args: ['--from', '2026-11-01T09:00:00Z', '--to'],
    exit: 2,
    says: [/--to needs a value, e\.g\. --to 2026-11-29T10:00:00Z/],
    covered: AFTER_WINDOWS,
  },
  {
    name: '--from not before --to: exit 2 (an empty window would check nothing)',
    args: ['--from', '2026-11-01T12:00:00Z', '--to', '2026-11-01T09:00:00Z'],
    exit: 2,
    says: [/--from 2026-11-01T12:00:00.000Z is not before --to 2026-11-01T09:00:00.000Z: the window would be empty/],
    covered: AFTER_WINDOWS,
  },
  {
    name: '--since (not a flag of reconcile) is refused, not ignored for the default window',
    args: ['--since', '2026-11-01T09:00:00Z'],
    exit: 2,
    says: [/unknown argument --since: the window is --from <ISO time> and --to <ISO time>/],
    covered: AFTER_WINDOWS,
  },
);

describe('npm run reconcile -- --from --to', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const env = { RECONCILE_SEAT_DB_URL: seat.url, RECONCILE_CONSUMER_DB_URL: consumers.url, LOG_LEVEL: 'warn' };
      const run = await runChildProgram('monitors/reconciliation/main.ts', env, row.args);
      expect(run.code, run.output).toBe(row.exit);
      for (const says of row.says) expect(run.output).toMatch(says);
      for (const says of row.saysNot ?? []) expect(run.output).not.toMatch(says);
      expect(await coverage()).toEqual(row.covered);
    });
  }
});
