/**
 * `npm run seat-service -- <command>`, one row per case, in order on one seat database the first
 * row creates: each row's exit code, what it prints, and the state it leaves, read back from the
 * seat database (never from the command's own output). Refusals exit 3 and change nothing; a bad
 * argument exits 2 before the database is touched (that row points the command at a port where
 * nothing listens). Each bad argument's sentence: test/unit/lib/command-arguments.test.ts.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { seatId } from '../../seat-service/inventory.js';
import { LOCAL_ROLE_PASSWORDS } from '../../stack/config.js';
import { runChildProgram } from '../consumers/helpers/child-consumer.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';

const stack = requireStack();
installLeakGuard();

const database = uniqueName('seatcli').toLowerCase();
const adminUrl = stack.postgresAdminUrl.replace(/\/postgres$/, `/${database}`);
const serviceUrl = adminUrl.replace('postgres:postgres@', `stagefront_service:${LOCAL_ROLE_PASSWORDS.service}@`);
const ENV = {
  SEAT_DB_URL: serviceUrl,
  SEAT_DB_ADMIN_URL: adminUrl,
  SCHEMA_REGISTRY_URL: stack.registryUrl,
  SEAT_SERVICE_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.service,
  DEBEZIUM_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.debezium,
  LOG_LEVEL: 'warn',
};
/** Nothing listens there: a row that reaches the database with it fails with exit 1, not 2. */
const NOWHERE = {
  SEAT_DB_URL: 'postgres://nobody:none@127.0.0.1:1/none',
  SEAT_DB_ADMIN_URL: 'postgres://nobody:none@127.0.0.1:1/none',
};
const SHOW = 'cli-show';
const seat = (row: number, n: number) => seatId(SHOW, 'A', row, n);

afterAll(async () => {
  await adminQuery(stack.postgresAdminUrl, `drop database if exists ${pg.escapeIdentifier(database)} with (force)`);
});

const query = async (sql: string, params: unknown[] = []) => (await adminQuery(adminUrl, sql, params)).rows;
const seatStates = async (...ids: string[]) =>
  (await query('select state from seats where seat_id = any($1) order by seat_id', [ids])).map((r) => r.state);
const holdStatus = async (holdId: string) =>
  (await query('select status from holds where hold_id = $1', [holdId])).map((r) => r.status);
const counts = async () =>
  (
    await query(`select (select count(*) from shows)::int as shows, (select count(*) from holds)::int as holds,
      (select count(*) from orders)::int as orders, (select count(*) from outbox)::int as outbox`)
  )[0];
/** Makes a hold due now (the sweeper's and confirm's view of an expired hold) without waiting for its TTL. */
const makeDue = (holdId: string) =>
  query(
    `update holds set created_at = now() - interval '2 minutes', expires_at = now() - interval '1 minute' where hold_id = $1`,
    [holdId],
  );

/** What earlier rows left for later ones: the hold ids they printed. */
const holds: Record<string, string> = {};
const holdIdOf = (output: string): string => {
  const id = /"holdId":"([0-9a-f-]{36})"/.exec(output)?.[1];
  if (id === undefined) throw new Error(`no holdId in ${output}`);
  return id;
};

interface Row {
  name: string;
  args: () => string[];
  env?: Record<string, string>;
  before?: () => Promise<unknown>;
  exit: number;
  says: RegExp[];
  /** The state afterwards, read from the seat database; `output` for rows that keep a hold id. */
  after?: (output: string) => Promise<void>;
}

let before: Awaited<ReturnType<typeof counts>>;
const unchanged = async () => expect(await counts()).toEqual(before);

const ROWS: Row[] = [
  {
    name: 'setup creates the missing database, migrates it and lets the service role in',
    args: () => ['setup'],
    env: { LOG_LEVEL: 'info' },
    exit: 0,
    says: [/seat database ready/],
    after: async () => {
      expect((await query('select count(*)::int as n from public.schema_migrations'))[0]?.n).toBeGreaterThan(0);
      const client = new pg.Client({ connectionString: serviceUrl });
      await client.connect();
      await client.end();
    },
  },
  {
    name: 'setup again changes nothing',
    args: () => ['setup'],
    env: { LOG_LEVEL: 'info' },
    before: async () => (before = await counts()),
    exit: 0,
    says: [/seat database ready/],
    after: unchanged,
  },
  {
    name: 'create-show writes the show and its seats, available',
    args: () => ['create-show', '--show', SHOW, '--sections', 'A:3x4:4500'],
    exit: 0,
    says: [/\{"seatsCreated":12\}/],
    after: async () => {
      expect(await query('select show_id, title from shows')).toEqual([{ show_id: SHOW, title: SHOW }]);
      expect(await query(`select state, count(*)::int as n from seats group by state`)).toEqual([
        { state: 'available', n: 12 },
      ]);
    },
  },
  {
    name: 'hold holds the seats',
    args: () => ['hold', '--show', SHOW, '--seats', `${seat(1, 1)},${seat(1, 2)}`, '--buyer', 'b1'],
    exit: 0,
    says: [/"status":"held"/],
    after: async (output) => {
      holds.first = holdIdOf(output);
      expect(await holdStatus(holds.first)).toEqual(['active']);
      expect(await seatStates(seat(1, 1), seat(1, 2))).toEqual(['held', 'held']);
    },
  },
  {
    name: 'hold of a seat already held: refused (exit 3, seat_taken), nothing written',
    args: () => ['hold', '--show', SHOW, '--seats', `${seat(1, 2)},${seat(1, 3)}`, '--buyer', 'b2'],
    before: async () => (before = await counts()),
    exit: 3,
    says: [/"status":"seat_taken"/, /seat-service: hold refused: seat_taken/],
    after: async () => {
      await unchanged();
      expect(await seatStates(seat(1, 3))).toEqual(['available']);
    },
  },
  {
    name: 'hold of seats that do not exist: refused (exit 3, unknown_seats)',
    args: () => ['hold', '--show', SHOW, '--seats', seat(9, 9), '--buyer', 'b2'],
    before: async () => (before = await counts()),
    exit: 3,
    says: [/"status":"unknown_seats"/],
    after: unchanged,
  },
  {
    name: 'confirm turns the hold into an order: seats sold, hold confirmed',
    args: () => ['confirm', '--hold', holds.first!, '--email', 'b1@example.test'],
    exit: 0,
    says: [/"status":"confirmed"/],
    after: async () => {
      expect(await holdStatus(holds.first!)).toEqual(['confirmed']);
      expect(await seatStates(seat(1, 1), seat(1, 2))).toEqual(['sold', 'sold']);
      expect(await query('select buyer_email from orders where hold_id = $1', [holds.first])).toEqual([
        { buyer_email: 'b1@example.test' },
      ]);
    },
  },
  {
    name: 'confirm of a confirmed hold: refused (exit 3, hold_not_active), no second order',
    args: () => ['confirm', '--hold', holds.first!, '--email', 'b1@example.test'],
    before: async () => (before = await counts()),
    exit: 3,
    says: [/"status":"hold_not_active","holdStatus":"confirmed"/],
    after: unchanged,
  },
  {
    name: 'confirm of a hold that does not exist: refused (exit 3, unknown_hold)',
    args: () => ['confirm', '--hold', randomUUID(), '--email', 'x@example.test'],
    before: async () => (before = await counts()),
    exit: 3,
    says: [/"status":"unknown_hold"/],
    after: unchanged,
  },
  {
    name: 'release gives the seats back',
    before: async () => {
      const run = await runChildProgram('seat-service/cli.ts', ENV, [
        'hold',
        '--show',
        SHOW,
        '--seats',
        seat(2, 1),
        '--buyer',
        'b3',
      ]);
      holds.released = holdIdOf(run.output);
    },
    args: () => ['release', '--hold', holds.released!],
    exit: 0,
    says: [/"status":"released"/],
    after: async () => {
      expect(await holdStatus(holds.released!)).toEqual(['released']);
      expect(await seatStates(seat(2, 1))).toEqual(['available']);
    },
  },
  {
    name: 'confirm of a hold past its expiry that no sweep ended yet: refused (exit 3, hold_expired), seats still held',
    before: async () => {
      const run = await runChildProgram('seat-service/cli.ts', ENV, [
        'hold',
        '--show',
        SHOW,
        '--seats',
        seat(3, 1),
        '--buyer',
        'b4',
      ]);
      holds.due = holdIdOf(run.output);
      await makeDue(holds.due);
      before = await counts();
    },
    args: () => ['confirm', '--hold', holds.due!, '--email', 'b4@example.test'],
    exit: 3,
    says: [/"status":"hold_expired"/],
    after: async () => {
      await unchanged();
      expect(await seatStates(seat(3, 1))).toEqual(['held']);
    },
  },
  {
    name: 'expire --limit 1 ends the due hold: hold expired, its seat available',
    args: () => ['expire', '--limit', '1'],
    exit: 0,
    says: [/\{"expired":1\}/],
    after: async () => {
      expect(await holdStatus(holds.due!)).toEqual(['expired']);
      expect(await seatStates(seat(3, 1))).toEqual(['available']);
    },
  },
  {
    name: 'expire with nothing due expires nothing',
    args: () => ['expire'],
    before: async () => (before = await counts()),
    exit: 0,
    says: [/\{"expired":0\}/],
    after: unchanged,
  },
  {
    name: 'an unknown command: exit 2, the commands listed',
    args: () => ['sell'],
    env: NOWHERE,
    exit: 2,
    says: [/unknown command "sell"; one of setup, purge-outbox, create-show, hold, confirm, release, expire/],
  },
];

describe('npm run seat-service -- <command>', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      await row.before?.();
      const run = await runChildProgram('seat-service/cli.ts', { ...ENV, ...row.env }, row.args());
      expect(run.code, run.output).toBe(row.exit);
      for (const says of row.says) expect(run.output).toMatch(says);
      await row.after?.(run.output);
    });
  }
});
