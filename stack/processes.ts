import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { dirname } from 'node:path';
import { sleep as pause } from '../lib/wait.js';

/** Starts a long-running process detached from ours, stdout and stderr appended to `logFile`. */
export function spawnDetached(opts: {
  command: string;
  args: string[];
  logFile: string;
  pidFile: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}): number {
  mkdirSync(dirname(opts.logFile), { recursive: true });
  mkdirSync(dirname(opts.pidFile), { recursive: true });
  const log = openSync(opts.logFile, 'a');
  const child = spawn(opts.command, opts.args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    detached: true,
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  if (child.pid === undefined) throw new Error(`could not start ${opts.command}: no process id`);
  child.unref();
  writeFileSync(opts.pidFile, `${child.pid}\n`);
  return child.pid;
}

/** Runs a command to completion; throws with its output when it fails. */
export function runCommand(command: string, args: string[], options: SpawnSyncOptions = {}): string {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.error) throw new Error(`${command} could not run: ${result.error.message}`);
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n');
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status}:\n${output}`);
  }
  return String(result.stdout ?? '');
}

export function readPid(pidFile: string): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0] ?? '', 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

export function isAlive(pid: number | undefined): pid is number {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (exited, not yet reaped) still answers signal 0.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return true;
  }
}

/** Sends SIGTERM to the process group, then SIGKILL after `graceMs`. Resolves when it is gone. */
export async function stopProcess(pid: number, graceMs: number): Promise<void> {
  signalGroup(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await pause(100);
  if (isAlive(pid)) {
    signalGroup(pid, 'SIGKILL');
    while (isAlive(pid)) await pause(50);
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** True when something accepts TCP connections on host:port. */
export function portOpen(port: number, host = '127.0.0.1', timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** The last `lines` lines of a log file, for error messages. */
export function tailFile(path: string, lines = 25): string {
  if (!existsSync(path)) return `(no log at ${path})`;
  return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** Resident set size of a process in bytes, from /proc; undefined when unknown. */
export function residentBytes(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

/** A process's command line, its arguments joined by spaces (from /proc); '' when unknown. */
export function commandLine(pid: number | undefined): string {
  if (pid === undefined) return '';
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}
