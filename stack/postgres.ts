import { createHash } from 'node:crypto';
import { readFileSync, chownSync, existsSync, mkdirSync, writeFileSync, appendFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import pg from 'pg';
import type { Component } from './component.js';
import { ownedPid } from './component.js';
import { projectRoot, type StackLayout } from './config.js';
import { postgresBinDir } from './prerequisites.js';
import { runCommand } from './processes.js';

const ADMIN_PASSWORD = 'postgres';
const SHARED_SETTINGS = join(projectRoot, 'stack', 'postgres.conf');

/** The stack's own Postgres cluster: logical decoding on, loopback only, run as a non-root user. */
export function postgresComponent(layout: StackLayout): Component {
  const port = layout.settings.postgresPort;
  const home = postgresHome(layout);
  const dataDir = join(home, 'data');
  const logFile = join(home, 'postgres.log');
  const pidFile = join(dataDir, 'postmaster.pid');
  return {
    name: 'postgres',
    port,
    logFile,
    dependsOn: [],
    pid: () => ownedPid(pidFile, 'postgres'),
    healthy: () => answersQuery(`postgres://postgres:${ADMIN_PASSWORD}@127.0.0.1:${port}/postgres`),
    async launch() {
      initCluster(layout, dataDir);
      writeFileSync(join(dataDir, 'stagefront.conf'), serverSettings(layout));
      chownToServerUser(join(dataDir, 'stagefront.conf'));
      prepareLog(logFile);
      asServerUser(pgBin('pg_ctl'), ['-D', dataDir, '-l', logFile, '-w', '-t', '60', 'start']);
    },
    async stop() {
      if (!existsSync(pidFile)) return;
      asServerUser(pgBin('pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', '-t', '60', 'stop']);
    },
  };
}

/** The shared settings file (also used by docker compose), then what only the native stack sets. */
function serverSettings(layout: StackLayout): string {
  const s = layout.settings;
  return [
    '# Written by the stack launcher at every start from stack/postgres.conf (copied: the postgres',
    '# OS user may not be able to read the project folder), then the native-only settings.',
    readFileSync(SHARED_SETTINGS, 'utf8'),
    "listen_addresses = '127.0.0.1'",
    `port = ${s.postgresPort}`,
    "unix_socket_directories = ''",
    `max_slot_wal_keep_size = '${s.postgresMaxSlotWalKeepSize}'`,
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
  return join(outsideDataRoot(), digest(layout.home, 8), 'postgres');
}

/** The one folder (per project checkout) holding clusters that could not live in the project. */
export function outsideDataRoot(): string {
  return join('/var/tmp', `stagefront-${digest(projectRoot, 12)}`);
}

function digest(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

function serverUserCanReach(path: string): boolean {
  let existing = path;
  while (!existsSync(existing)) existing = dirname(existing);
  try {
    runCommand('runuser', ['-u', serverUser(), '--', 'test', '-x', existing]);
    return true;
  } catch {
    return false;
  }
}

function initCluster(layout: StackLayout, dataDir: string): void {
  if (existsSync(join(dataDir, 'PG_VERSION'))) return;
  const parent = dirname(dataDir);
  mkdirSync(parent, { recursive: true });
  chownToServerUser(parent);
  const pwfile = join(parent, 'admin-password');
  writeFileSync(pwfile, `${ADMIN_PASSWORD}\n`, { mode: 0o600 });
  chownToServerUser(pwfile);
  asServerUser(pgBin('initdb'), [
    '-D', dataDir,
    '-U', 'postgres',
    `--pwfile=${pwfile}`,
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    `--wal-segsize=${layout.settings.postgresWalSegmentMb}`,
    '--encoding=UTF8',
    '--locale=C',
  ]);
  appendFileSync(join(dataDir, 'postgresql.conf'), "\ninclude_if_exists = 'stagefront.conf'\n");
}

function pgBin(name: string): string {
  const dir = postgresBinDir();
  if (!dir) throw new Error('Postgres server binaries not found; run the stack start command, which checks prerequisites');
  return join(dir, name);
}

/** Postgres refuses to run as root; as root we run its tools as the `postgres` OS user. */
function asServerUser(command: string, args: string[]): string {
  if (process.getuid?.() !== 0) return runCommand(command, args);
  return runCommand('runuser', ['-u', serverUser(), '--', command, ...args]);
}

function serverUser(): string {
  return process.env.STACK_POSTGRES_OS_USER ?? 'postgres';
}

function chownToServerUser(path: string): void {
  if (process.getuid?.() !== 0) return;
  const uid = Number(runCommand('id', ['-u', serverUser()]).trim());
  const gid = Number(runCommand('id', ['-g', serverUser()]).trim());
  chownSync(path, uid, gid);
}

function prepareLog(logFile: string): void {
  mkdirSync(dirname(logFile), { recursive: true });
  if (!existsSync(logFile)) writeFileSync(logFile, '');
  chownToServerUser(logFile);
}

async function answersQuery(connectionString: string): Promise<boolean> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 2000 });
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

