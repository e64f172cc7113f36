import { readFileSync, existsSync, mkdirSync, writeFileSync, appendFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import pg from 'pg';
import type { Component } from './component.js';
import { ownedPid } from './component.js';
import { projectRoot, type StackLayout } from './config.js';
import { REGISTRY_DATABASE } from './registry.js';
import {
  asServerUser,
  chownToServerUser,
  dataDirMajor,
  digest,
  pgBin,
  privateOutsideDataRoot,
  serverBinDir,
  serverMajor,
  serverUserCanReach,
  SLOT_SYNC_MIN_MAJOR,
} from './postgres-server.js';

export { outsideDataRoot } from './postgres-server.js';

const ADMIN_PASSWORD = 'postgres';
const SHARED_SETTINGS = join(projectRoot, 'stack', 'postgres.conf');
/** Who may connect how (also used by docker compose): physical replication for the admin role only. */
const SHARED_HBA = join(projectRoot, 'stack', 'pg_hba.conf');

/**
 * The cluster's databases that are not seat databases: PUBLIC (so the Debezium role too) has no
 * CONNECT on them. A role that needs one gets CONNECT by name (the superuser needs none).
 */
export const NON_SEAT_DATABASES = ['postgres', 'template1', REGISTRY_DATABASE] as const;

/** Name of the physical slot the standby streams through (and the primary waits for before logical decoding sends). */
export const STANDBY_SLOT = 'stagefront_standby';

/** The stack's own Postgres cluster: logical decoding on, loopback only, run as a non-root user. */
export function postgresComponent(layout: StackLayout): Component {
  const home = postgresHome(layout);
  return clusterComponent(layout, {
    name: 'postgres',
    port: layout.settings.postgresPort,
    home,
    dependsOn: [],
    prepare: (dataDir) => {
      refuseFormerPrimary(home);
      initCluster(layout, dataDir);
    },
    // With a standby, logical decoding sends nothing the standby has not received, so the
    // synchronized slot on the standby is never ahead of what it could resume from.
    settings: layout.settings.postgresStandby ? [`synchronized_standby_slots = '${STANDBY_SLOT}'`] : [],
  });
}

export interface ClusterOptions {
  name: string;
  port: number;
  /** Folder of the cluster: data/ and the server log. */
  home: string;
  dependsOn: string[];
  /** Makes the data folder when it is missing (initdb, or a copy of the primary). */
  prepare(dataDir: string): void | Promise<void>;
  /** Lines after the shared and native settings. */
  settings: string[];
}

/** One Postgres cluster of the stack, started and stopped with pg_ctl as the server user. */
export function clusterComponent(layout: StackLayout, options: ClusterOptions): Component {
  const dataDir = join(options.home, 'data');
  const logFile = join(options.home, 'postgres.log');
  const pidFile = join(dataDir, 'postmaster.pid');
  return {
    name: options.name,
    port: options.port,
    logFile,
    dependsOn: options.dependsOn,
    pid: () => ownedPid(pidFile, 'postgres'),
    healthy: () => answersQuery(`postgres://postgres:${ADMIN_PASSWORD}@127.0.0.1:${options.port}/postgres`),
    async launch() {
      checkBinaries(layout, dataDir);
      await options.prepare(dataDir);
      writeFileSync(join(dataDir, 'stagefront.conf'), serverSettings(layout, options.port, options.settings));
      chownToServerUser(join(dataDir, 'stagefront.conf'));
      writeHba(dataDir);
      prepareLog(logFile);
      asServerUser(pgBin(layout, 'pg_ctl'), ['-D', dataDir, '-l', logFile, '-w', '-t', '60', 'start']);
    },
    // A cluster started by an older launcher (initdb's `host replication all` lines) gets the
    // stack's pg_hba.conf with a reload, no restart; the primary revokes PUBLIC's CONNECT again.
    async configure() {
      const adminUrl = `postgres://postgres:${ADMIN_PASSWORD}@127.0.0.1:${options.port}/postgres`;
      if (writeHba(dataDir)) await adminSql(adminUrl, 'select pg_reload_conf()');
      await restrictConnect(adminUrl);
    },
    async stop() {
      if (!existsSync(pidFile)) return;
      asServerUser(pgBin(layout, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', '-t', '60', 'stop']);
    },
  };
}

/** The standby setting needs 17+; a data folder runs only with the major version that made it. */
function checkBinaries(layout: StackLayout, dataDir: string): void {
  const binDir = serverBinDir(layout);
  if (binDir === undefined) return; // pgBin names the fix
  const major = serverMajor(binDir);
  if (layout.settings.postgresStandby && major < SLOT_SYNC_MIN_MAJOR) {
    throw new Error(
      `STACK_POSTGRES_STANDBY=yes needs Postgres ${SLOT_SYNC_MIN_MAJOR} or newer, but STACK_POSTGRES_BINARIES=${layout.settings.postgresBinaries} runs ${major} (${binDir}): ` +
        'set STACK_POSTGRES_BINARIES=auto (or maven) to use the Postgres 17 binaries from Maven Central',
    );
  }
  const created = dataDirMajor(dataDir);
  if (created !== undefined && created !== major) {
    throw new Error(
      `the cluster in ${dataDir} was created by Postgres ${created}, but this stack now runs Postgres ${major} (${binDir}): ` +
        `use the settings it was created with (STACK_POSTGRES_STANDBY, STACK_POSTGRES_BINARIES), or another STACK_HOME, or delete ${dirname(dataDir)} (its data is lost)`,
    );
  }
}

/** Written into the former primary's folder by the failover command: it must never run as a primary again. */
export const FAILED_OVER_MARKER = 'failed-over.json';

function refuseFormerPrimary(home: string): void {
  const marker = join(home, FAILED_OVER_MARKER);
  if (!existsSync(marker)) return;
  const facts = JSON.parse(readFileSync(marker, 'utf8')) as { newPrimaryPort?: number; at?: string };
  throw new Error(
    `this Postgres (${home}) is the former primary: the seat database failed over to the standby on port ${facts.newPrimaryPort ?? '?'} at ${facts.at ?? '?'}. ` +
      'Starting it would make two primaries. Keep the stack on the new primary (seat programs pointed at its port), and when it is time to rebuild, ' +
      `stop the stack and move ${home} away (then the next start makes a fresh cluster there)`,
  );
}

/** The shared settings file (also used by docker compose), then what only the native stack sets. */
function serverSettings(layout: StackLayout, port: number, extra: string[]): string {
  const s = layout.settings;
  return [
    '# Written by the stack launcher at every start from stack/postgres.conf (copied: the postgres',
    '# OS user may not be able to read the project folder), then the native-only settings.',
    readFileSync(SHARED_SETTINGS, 'utf8'),
    "listen_addresses = '127.0.0.1'",
    `port = ${port}`,
    "unix_socket_directories = ''",
    `max_slot_wal_keep_size = '${s.postgresMaxSlotWalKeepSize}'`,
    ...extra,
    '',
  ].join('\n');
}

/**
 * Where the cluster lives: `<stack home>/postgres`. As root, Postgres runs as the `postgres` OS
 * user, which must be able to reach that folder; when a parent folder is private (a clone under
 * a `mktemp -d` folder, say) the cluster goes under outsideDataRoot() instead.
 */
export function postgresHome(layout: StackLayout): string {
  const preferred = join(layout.home, 'postgres');
  if (process.getuid?.() !== 0 || serverUserCanReach(layout.home)) return preferred;
  return join(privateOutsideDataRoot(), digest(layout.home, 8), 'postgres');
}

/** initdb into `dataDir` as the server user: the admin role `postgres` with the stack's password, UTF8, C locale. */
export function initCluster(layout: StackLayout, dataDir: string): void {
  if (existsSync(join(dataDir, 'PG_VERSION'))) return;
  const parent = dirname(dataDir);
  mkdirSync(parent, { recursive: true });
  chownToServerUser(parent);
  const pwfile = join(parent, 'admin-password');
  writeFileSync(pwfile, `${ADMIN_PASSWORD}\n`, { mode: 0o600 });
  chownToServerUser(pwfile);
  asServerUser(pgBin(layout, 'initdb'), [
    '-D',
    dataDir,
    '-U',
    'postgres',
    `--pwfile=${pwfile}`,
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    `--wal-segsize=${layout.settings.postgresWalSegmentMb}`,
    '--encoding=UTF8',
    '--locale=C',
  ]);
  appendFileSync(join(dataDir, 'postgresql.conf'), "\ninclude_if_exists = 'stagefront.conf'\n");
}

function prepareLog(logFile: string): void {
  mkdirSync(dirname(logFile), { recursive: true });
  if (!existsSync(logFile)) writeFileSync(logFile, '');
  chownToServerUser(logFile);
}

/** Writes the stack's pg_hba.conf into the data folder; true when it changed (a running server needs a reload). */
function writeHba(dataDir: string): boolean {
  const file = join(dataDir, 'pg_hba.conf');
  const wanted = readFileSync(SHARED_HBA, 'utf8');
  if (existsSync(file) && readFileSync(file, 'utf8') === wanted) return false;
  writeFileSync(file, wanted, { mode: 0o600 });
  chownToServerUser(file);
  return true;
}

/**
 * REVOKE CONNECT FROM PUBLIC on the cluster's non-seat databases that exist (idempotent; a standby
 * gets it from its primary). New databases get PUBLIC's CONNECT back by default (CREATE DATABASE
 * does not copy the template's privileges): the consumer databases revoke it when their role is set up.
 */
export async function restrictConnect(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    if ((await client.query('select pg_is_in_recovery() as standby')).rows[0]?.standby === true) return;
    const { rows } = await client.query('select datname from pg_database where datname = any($1)', [
      [...NON_SEAT_DATABASES],
    ]);
    for (const { datname } of rows as { datname: string }[]) {
      await client.query(`revoke connect, temporary on database ${client.escapeIdentifier(datname)} from public`);
    }
  } finally {
    await client.end();
  }
}

async function adminSql(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** True when a Postgres at this URL (a node, or the endpoint in front of them) answers `select 1` within 2 s. */
export async function answersQuery(connectionString: string): Promise<boolean> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
