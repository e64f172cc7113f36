/**
 * The compose setup service's program, run like compose runs it (`npm run -s compose:setup`
 * with the setup service's environment), against the native stack's Postgres and databases of
 * its own: afterwards every program service logs in with the database URL compose gives it and
 * can do what its program needs, and running it again changes nothing.
 */
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../stack/config.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';
import { loadCompose, serviceEnv } from './compose-model.js';

const stack = requireStack();
const compose = loadCompose();
const seatDb = uniqueName('compose_seat').toLowerCase();
const consumerDb = uniqueName('compose_consumers').toLowerCase();
const stackHost = new URL(stack.postgresAdminUrl).host;

/** A compose database URL pointed at the native stack and this test's databases. */
function onStack(url: string): string {
  const parsed = new URL(url);
  parsed.host = stackHost;
  parsed.pathname =
    parsed.pathname === '/stagefront_consumers'
      ? `/${consumerDb}`
      : parsed.pathname === '/stagefront'
        ? `/${seatDb}`
        : parsed.pathname;
  return parsed.toString();
}

/** A service's environment with every database URL pointed at the stack. */
function envOnStack(service: string): Record<string, string> {
  const env = serviceEnv(compose.services[service] ?? {});
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => [name, /^postgres(ql)?:\/\//.test(value) ? onStack(value) : value]),
  );
}

function runSetup(): { status: number | null; output: string } {
  const { PATH, HOME } = process.env;
  const result = spawnSync('npm', ['run', '-s', 'compose:setup'], {
    cwd: projectRoot,
    env: { PATH, HOME, ...envOnStack('setup') },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

async function asRole<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  for (const name of [seatDb, consumerDb])
    await adminQuery(stack.postgresAdminUrl, `drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
});

describe("npm run compose:setup with the setup service's environment", () => {
  it('creates and migrates the databases, and is safe to run again', () => {
    const first = runSetup();
    expect(first.output).toContain('seat and consumer databases ready');
    expect(first.status).toBe(0);
    const again = runSetup();
    expect(again.output).toContain('"applied":[]');
    expect(again.status).toBe(0);
  });

  it('the consumers log in as the owner of the consumer database and can create their tables', async () => {
    for (const service of ['seat-availability', 'confirmation-email', 'sales-ledger']) {
      const url = envOnStack(service).CONSUMER_DATABASE_URL ?? '';
      const owner = await asRole(url, async (client) => {
        await client.query('create table if not exists compose_setup_probe (id int)');
        await client.query('drop table compose_setup_probe');
        return (
          await client.query(
            `select pg_get_userbyid(datdba) as owner, current_user as me from pg_database where datname = current_database()`,
          )
        ).rows[0] as { owner: string; me: string };
      });
      expect(owner.owner, service).toBe(owner.me);
    }
  });

  it('the slot monitor reads the slots and may change max_slot_wal_keep_size', async () => {
    const url = envOnStack('slot-monitor').SLOT_MONITOR_DATABASE_URL ?? '';
    const row = await asRole(url, async (client) => {
      await client.query('select slot_name, wal_status, safe_wal_size from pg_replication_slots');
      return (
        await client.query(
          `select has_parameter_privilege(current_user, 'max_slot_wal_keep_size', 'ALTER SYSTEM') as may`,
        )
      ).rows[0] as { may: boolean };
    });
    expect(row.may).toBe(true);
  });

  it('the job watchdog reads job_runs and holds, and nothing else', async () => {
    const url = envOnStack('job-watchdog').JOB_WATCHDOG_DATABASE_URL ?? '';
    await asRole(url, async (client) => {
      await client.query('select count(*) from job_runs');
      await client.query('select count(*) from holds');
      await expect(client.query('select count(*) from outbox')).rejects.toThrow(/permission denied/);
    });
  });

  it('the hold sweeper and the crowd log in as the seat service role; Debezium as its role with REPLICATION', async () => {
    for (const [service, variable] of [
      ['hold-sweeper', 'SEAT_DB_URL'],
      ['crowd', 'SEAT_DB_URL'],
    ] as const) {
      await asRole(envOnStack(service)[variable] ?? '', (client) => client.query('select count(*) from holds'));
    }
    const debezium = await asRole(
      envOnStack('setup').CONNECTOR_SEAT_DB_URL ?? '',
      async (client) =>
        (await client.query('select rolreplication from pg_roles where rolname = current_user')).rows[0] as {
          rolreplication: boolean;
        },
    );
    expect(debezium.rolreplication).toBe(true);
  });
});
