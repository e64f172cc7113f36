/**
 * Who gets into the seat database's cluster, on a cluster of its own started by the launcher's
 * component (as an older launcher left it: initdb's pg_hba.conf, with `host replication all`), then
 * brought up to date the way `stack start` does on a running cluster (configure: the stack's
 * pg_hba.conf and a reload, PUBLIC's CONNECT revoked). The Debezium role then opens no physical
 * replication connection (no base backup, no WAL stream), enters no database but the seat one,
 * and still replicates the seat database logically; the admin role (the standby's) still streams.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureConsumerRole } from '../../consumers/runtime/consumer-role.js';
import { createPool, ensureDatabase } from '../../lib/postgres.js';
import { waitFor } from '../../lib/wait.js';
import { migrateSeatDatabase, setupRoles } from '../../seat-service/database-setup.js';
import { LOCAL_ROLE_PASSWORDS, stackLayout } from '../../stack/config.js';
import { postgresComponent, postgresHome } from '../../stack/postgres.js';
import { chownToServerUser, pgBin } from '../../stack/postgres-server.js';
import { REGISTRY_DATABASE } from '../../stack/registry.js';
import { testLogger } from '../support/seat-pipeline.js';
import { adminQuery, requireStack } from '../support/stack.js';

requireStack();

const PORT = 28410;
const DEBEZIUM = { user: 'stagefront_debezium', password: LOCAL_ROLE_PASSWORDS.debezium };
const ADMIN = { user: 'postgres', password: 'postgres' };
const SEAT = 'stagefront';
const CONSUMERS = 'stagefront_consumers';

/** initdb's own rules (scram-sha-256 on loopback): what a cluster made before the stack wrote its own had. */
const INITDB_HBA = [
  'local all all trust',
  'host all all 127.0.0.1/32 scram-sha-256',
  'local replication all trust',
  'host replication all 127.0.0.1/32 scram-sha-256',
  '',
].join('\n');

const home = mkdtempSync(join(tmpdir(), 'pg-access-'));
const layout = stackLayout({
  ...process.env,
  STACK_HOME: home,
  STACK_POSTGRES_PORT: String(PORT),
  STACK_POSTGRES_STANDBY: 'no',
});
const component = postgresComponent(layout);
const adminUrl = (database: string) => `postgres://postgres:postgres@127.0.0.1:${PORT}/${database}`;

beforeAll(async () => {
  await component.launch();
  await waitFor(() => component.healthy(), {
    timeoutMs: 60_000,
    intervalMs: 200,
    description: `own Postgres on ${PORT}`,
  });
  const dataDir = join(postgresHome(layout), 'data');
  writeFileSync(join(dataDir, 'pg_hba.conf'), INITDB_HBA);
  chownToServerUser(join(dataDir, 'pg_hba.conf'));
  await adminQuery(adminUrl('postgres'), 'select pg_reload_conf()');
  for (const database of [SEAT, REGISTRY_DATABASE, CONSUMERS]) await ensureDatabase(adminUrl('postgres'), database);
  const seat = createPool({
    connectionString: adminUrl(SEAT),
    applicationName: 'test-access',
    logger: testLogger,
    max: 1,
  });
  try {
    await migrateSeatDatabase(seat, testLogger);
    await setupRoles(seat, LOCAL_ROLE_PASSWORDS);
  } finally {
    await seat.end();
  }
  const consumers = createPool({
    connectionString: adminUrl(CONSUMERS),
    applicationName: 'test-access',
    logger: testLogger,
    max: 1,
  });
  try {
    await ensureConsumerRole(consumers, { role: 'stagefront_consumer', password: LOCAL_ROLE_PASSWORDS.consumer });
  } finally {
    await consumers.end();
  }
  // What `stack start` does with a cluster that is already running.
  await component.configure?.();
}, 180_000);

afterAll(async () => {
  await component.stop().catch(() => undefined);
  rmSync(postgresHome(layout), { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}, 120_000);

/** Opens a connection (replication: 'true' physical, 'database' logical), runs `sql`, returns its rows or the error. */
async function attempt(
  role: { user: string; password: string },
  database: string,
  sql: string,
  replication?: 'true' | 'database',
): Promise<{ rows?: Record<string, unknown>[]; error?: string }> {
  const config = {
    host: '127.0.0.1',
    port: PORT,
    user: role.user,
    password: role.password,
    database,
    connectionTimeoutMillis: 5000,
    ...(replication ? { replication } : {}),
  };
  const client = new pg.Client(config as pg.ClientConfig);
  client.on('error', () => undefined);
  try {
    await client.connect();
    return { rows: (await client.query(sql)).rows as Record<string, unknown>[] };
  } catch (error) {
    return { error: (error as Error).message };
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('the Debezium role', () => {
  it('takes no base backup: pg_basebackup is refused', () => {
    const target = mkdtempSync(join(tmpdir(), 'pg-access-backup-'));
    try {
      const result = spawnSync(
        pgBin(layout, 'pg_basebackup'),
        [
          '-h',
          '127.0.0.1',
          '-p',
          String(PORT),
          '-U',
          DEBEZIUM.user,
          '-D',
          join(target, 'copy'),
          '-X',
          'none',
          '--no-sync',
          '--checkpoint=fast',
        ],
        {
          encoding: 'utf8',
          env: { ...process.env, PGPASSWORD: DEBEZIUM.password },
        },
      );
      expect(result.status, result.stdout).not.toBe(0);
      expect(result.stderr).toMatch(/no pg_hba\.conf entry for replication connection.*stagefront_debezium/);
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  });

  it('opens no physical replication connection (IDENTIFY_SYSTEM, BASE_BACKUP)', async () => {
    for (const command of ['IDENTIFY_SYSTEM', 'BASE_BACKUP']) {
      const result = await attempt(DEBEZIUM, 'postgres', command, 'true');
      expect(result.error, command).toMatch(/no pg_hba\.conf entry for replication connection/);
    }
  });

  it('enters no database but the seat database', async () => {
    for (const database of ['postgres', 'template1', REGISTRY_DATABASE, CONSUMERS]) {
      const result = await attempt(DEBEZIUM, database, 'select 1');
      expect(result.error, database).toMatch(/permission denied for database/);
      const logical = await attempt(DEBEZIUM, database, 'IDENTIFY_SYSTEM', 'database');
      expect(logical.error, `${database}, logical replication`).toMatch(/permission denied for database/);
    }
  });

  it('still replicates the seat database logically', async () => {
    const identified = await attempt(DEBEZIUM, SEAT, 'IDENTIFY_SYSTEM', 'database');
    expect(identified.error).toBeUndefined();
    expect(identified.rows?.[0]?.dbname).toBe(SEAT);
    const slot = await attempt(
      DEBEZIUM,
      SEAT,
      'CREATE_REPLICATION_SLOT access_probe TEMPORARY LOGICAL pgoutput',
      'database',
    );
    expect(slot.error).toBeUndefined();
    expect(slot.rows?.[0]?.slot_name).toBe('access_probe');
  });

  it('reads and writes only the tables its connector needs', async () => {
    const { rows } = await adminQuery(
      adminUrl(SEAT),
      `select table_name, string_agg(privilege_type, ',' order by privilege_type) as privileges
         from information_schema.role_table_grants where grantee = $1 group by table_name order by table_name`,
      [DEBEZIUM.user],
    );
    expect(rows).toEqual([
      { table_name: 'debezium_signal', privileges: 'INSERT,SELECT' },
      { table_name: 'outbox', privileges: 'SELECT' },
      { table_name: 'outbox_reconciled', privileges: 'INSERT,SELECT' },
    ]);
  });
});

describe('the admin role (the standby streams as it)', () => {
  it('still opens a physical replication connection', async () => {
    const result = await attempt(ADMIN, 'postgres', 'IDENTIFY_SYSTEM', 'true');
    expect(result.error).toBeUndefined();
    expect(result.rows?.[0]?.dbname).toBeNull();
  });
});
