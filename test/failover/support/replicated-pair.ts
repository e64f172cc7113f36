/**
 * A primary and its physical standby, both of this test's own (own folders, own free ports), so
 * a test may kill the primary with -9 and promote the standby without touching the shared stack.
 * The primary is the launcher's own postgresComponent (the stack's settings: wal_level=logical);
 * the standby is a pg_basebackup of it (-R: it streams from the primary; -C -S: through a
 * physical slot, so the primary keeps the WAL the standby has not received), started with the
 * same component on its own port. Replication is asynchronous, as the stack's Postgres is.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { waitFor } from '../../../lib/wait.js';
import { stackLayout } from '../../../stack/config.js';
import { postgresComponent, postgresHome } from '../../../stack/postgres.js';
import { postgresBinDir } from '../../../stack/prerequisites.js';
import { runCommand } from '../../../stack/processes.js';
import { track } from '../../support/leak-guard.js';
import { freePort } from '../../slot-monitor/support/alertmanager-process.js';
import { adminQuery, uniqueName } from '../../support/stack.js';

const ADMIN = 'postgres:postgres';
const STANDBY_SLOT = 'failover_standby';

export interface PairMember {
  port: number;
  /** URL of `database` as `user`:`password` (the admin by default). */
  urlFor(database: string, user?: string, password?: string): string;
  admin(sql: string, params?: unknown[], database?: string): Promise<pg.QueryResult>;
  /** The postmaster's pid while it runs. */
  pid(): number | undefined;
}

export interface ReplicatedPair {
  primary: PairMember;
  standby: PairMember;
  /** Creates a database on the primary; the standby gets it through replication. */
  createDatabase(prefix: string): Promise<string>;
  /** Waits until the standby has replayed everything the primary has written so far. */
  waitForStandbyCaughtUp(): Promise<void>;
  /**
   * Replication lag made deterministic: the standby's primary_conninfo is emptied, so its WAL
   * receiver stops; from then on the primary commits what the standby never gets. (Stopping the
   * receiver with SIGSTOP is not enough: the WAL already in the socket still arrives after the kill.)
   */
  holdReplication(): Promise<void>;
  /** kill -9 of the primary's postmaster; waits until it no longer answers. */
  killPrimary(): Promise<void>;
  /** Promotes the standby; waits until it accepts writes. */
  promoteStandby(): Promise<void>;
  /** Stops both (whatever is left of them) and deletes their folders. Tracked by the leak guard. */
  remove(): Promise<void>;
}

function layoutFor(home: string, port: number) {
  return stackLayout({ ...process.env, STACK_HOME: home, STACK_POSTGRES_PORT: String(port) });
}

function member(component: ReturnType<typeof postgresComponent>, port: number): PairMember {
  const urlFor = (database: string, user = 'postgres', password = 'postgres') =>
    `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  return {
    port,
    urlFor,
    admin: (sql, params = [], database = 'postgres') => adminQuery(urlFor(database), sql, params),
    pid: () => component.pid(),
  };
}

/** Postgres refuses to run as root: its tools run as the postgres OS user then (as the launcher does). */
function asServerUser(command: string, args: string[]): string {
  if (process.getuid?.() !== 0) return runCommand(command, args);
  return runCommand('runuser', ['-u', process.env.STACK_POSTGRES_OS_USER ?? 'postgres', '--', command, ...args]);
}

function pgTool(name: string): string {
  const dir = postgresBinDir();
  if (dir === undefined) throw new Error('Postgres server binaries not found: npm run stack -- start installs them');
  return join(dir, name);
}

async function waitUntil(what: string, check: () => Promise<boolean>): Promise<void> {
  await waitFor(check, { timeoutMs: 60_000, intervalMs: 200, description: what });
}

export async function startReplicatedPair(prefix = 'failover'): Promise<ReplicatedPair> {
  const root = join('.stack', 'failover-test', uniqueName(prefix).toLowerCase());
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const primaryLayout = layoutFor(join(root, 'primary'), primaryPort);
  const standbyLayout = layoutFor(join(root, 'standby'), standbyPort);
  const primaryComponent = postgresComponent(primaryLayout);
  const standbyComponent = postgresComponent(standbyLayout);
  const primary = member(primaryComponent, primaryPort);
  const standby = member(standbyComponent, standbyPort);
  const remove = track(`replicated pair ${root}`, async () => {
    for (const component of [standbyComponent, primaryComponent]) await component.stop().catch(() => undefined);
    for (const layout of [primaryLayout, standbyLayout]) rmSync(postgresHome(layout), { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
  });
  try {
    await primaryComponent.launch();
    await waitUntil(`the primary on ${primaryPort}`, () => primaryComponent.healthy());
    // -R writes primary_conninfo and standby.signal; -C -S a physical slot on the primary; -X stream the WAL of the copy.
    const standbyData = join(postgresHome(standbyLayout), 'data');
    rmSync(postgresHome(standbyLayout), { recursive: true, force: true });
    runCommand('mkdir', ['-p', postgresHome(standbyLayout)]);
    if (process.getuid?.() === 0)
      runCommand('chown', [process.env.STACK_POSTGRES_OS_USER ?? 'postgres', postgresHome(standbyLayout)]);
    asServerUser(pgTool('pg_basebackup'), [
      '-d',
      `postgres://${ADMIN}@127.0.0.1:${primaryPort}/postgres`,
      '-D',
      standbyData,
      '-R',
      '-X',
      'stream',
      '-C',
      '-S',
      STANDBY_SLOT,
      '--checkpoint=fast',
    ]);
    await standbyComponent.launch();
    await waitUntil(`the standby on ${standbyPort}`, () => standbyComponent.healthy());
    await waitUntil(
      'the standby to stream from the primary',
      async () =>
        (await standby.admin(/* sql */ `select status from pg_stat_wal_receiver`)).rows[0]?.status === 'streaming',
    );
  } catch (error) {
    await remove();
    throw error;
  }

  return {
    primary,
    standby,
    async createDatabase(name) {
      const database = uniqueName(name).toLowerCase();
      await primary.admin(/* sql */ `create database ${pg.escapeIdentifier(database)}`);
      await waitUntil(
        `database ${database} on the standby`,
        async () =>
          (await standby.admin(/* sql */ `select 1 from pg_database where datname = $1`, [database])).rowCount === 1,
      );
      return database;
    },
    async waitForStandbyCaughtUp() {
      const { rows } = await primary.admin(/* sql */ `select pg_current_wal_lsn()::text as lsn`);
      const target = (rows[0] as { lsn: string }).lsn;
      await waitUntil(`the standby to replay up to ${target}`, async () => {
        const replayed = await standby.admin(/* sql */ `select pg_last_wal_replay_lsn() >= $1::pg_lsn as done`, [
          target,
        ]);
        return (replayed.rows[0] as { done: boolean }).done;
      });
    },
    async holdReplication() {
      await standby.admin(/* sql */ `alter system set primary_conninfo = ''`);
      await standby.admin(/* sql */ `select pg_reload_conf()`);
      await waitUntil(
        'the standby to stop receiving WAL',
        async () => (await standby.admin(/* sql */ `select 1 from pg_stat_wal_receiver`)).rowCount === 0,
      );
    },
    async killPrimary() {
      const pid = primaryComponent.pid();
      if (pid === undefined) throw new Error('the primary is not running');
      process.kill(pid, 'SIGKILL');
      // Its children notice the postmaster's death on their own and exit; the port stops answering.
      await waitUntil('the killed primary to stop answering', async () => !(await primaryComponent.healthy()));
    },
    async promoteStandby() {
      await standby.admin(/* sql */ `select pg_promote(true, 60)`);
      await waitUntil(
        'the standby to leave recovery',
        async () => (await standby.admin(/* sql */ `select pg_is_in_recovery() as r`)).rows[0]?.r === false,
      );
    },
    remove,
  };
}
