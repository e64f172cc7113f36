/**
 * A small rehearsal as a child process, its programs kept running after the report so their
 * metrics can be queried, then all of them stopped. The rehearsal's programs listen on fixed ports,
 * so only one rehearsal may run on a machine at a time: the machine-wide rehearsal lock is held
 * from before it starts until its last program is gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../lib/wait.js';
import { projectRoot, stackLayout } from '../../stack/config.js';

export const REHEARSAL_LOCK_FILE = join(tmpdir(), 'stagefront-rehearsal.lock');

/**
 * Takes the rehearsal lock with flock(1) and holds it until release(): the holder is a `cat` on a
 * pipe of ours, so the lock also goes when this process dies.
 */
export async function holdRehearsalLock(timeoutMs: number): Promise<() => Promise<void>> {
  const holder = spawn(
    'flock',
    [
      '--timeout',
      String(Math.ceil(timeoutMs / 1000)),
      REHEARSAL_LOCK_FILE,
      'sh',
      '-c',
      'echo locked && exec cat > /dev/null',
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => holder.once('exit', (code) => resolve(code)));
  let output = '';
  holder.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  holder.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const spawnFailed = new Promise<never>((_, reject) =>
    holder.once('error', (err) =>
      reject(new Error(`cannot run flock (util-linux) for the rehearsal lock: ${err.message}`)),
    ),
  );
  const locked = new Promise<void>((resolve, reject) => {
    holder.stdout.on('data', () => {
      if (output.includes('locked')) resolve();
    });
    void exited.then((code) =>
      reject(
        new Error(
          `another rehearsal held ${REHEARSAL_LOCK_FILE} for ${timeoutMs / 1000} s (flock exited ${code}: ${output.trim()}); wait for it to end and run the test again`,
        ),
      ),
    );
  });
  await Promise.race([locked, spawnFailed]);
  return async () => {
    holder.stdin.end();
    await exited;
  };
}

export interface RehearsalRun {
  child: ChildProcess;
  logFile: string;
  /** The end of its output, for failure messages. */
  outputTail(): string;
  /** The rehearsal and every program it started (its process group): SIGTERM, SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts `npm run rehearsal`'s program with `env` added, in a process group of its own. */
export function startRehearsal(env: Record<string, string>): RehearsalRun {
  const logDir = stackLayout().logDir;
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, 'dashboards-test-rehearsal.log');
  const log = openSync(logFile, 'w');
  // detached: the rehearsal leads a process group, and the consumers and monitors it starts stay in
  // it after it exits (REHEARSAL_KEEP_CONSUMERS=yes), so one signal to the group reaches them all.
  const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'rehearsal', 'main.ts')], {
    cwd: projectRoot,
    env: { ...process.env, ...env, REHEARSAL_KEEP_CONSUMERS: 'yes' },
    stdio: ['ignore', log, log],
    detached: true,
  });
  closeSync(log);
  const group = child.pid;
  if (group === undefined) throw new Error('the rehearsal did not start (no pid)');
  const groupAlive = () => {
    try {
      process.kill(-group, 0);
      return true;
    } catch {
      return false;
    }
  };
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-group, signal);
    } catch {
      // the group is gone already
    }
  };
  return {
    child,
    logFile,
    outputTail: () => readFileSync(logFile, 'utf8').split('\n').slice(-25).join('\n'),
    async stop(graceMs = 20_000) {
      signalGroup('SIGTERM');
      try {
        await waitFor(() => !groupAlive(), {
          timeoutMs: graceMs,
          intervalMs: 200,
          description: 'the rehearsal and its programs to exit after SIGTERM',
        });
      } catch {
        signalGroup('SIGKILL');
        await waitFor(() => !groupAlive(), {
          timeoutMs: 5_000,
          intervalMs: 100,
          description: 'the rehearsal and its programs to exit after SIGKILL',
        });
      }
    },
  };
}
