/** A consumer program run as a child process (node --import tsx), tracked by the leak guard. */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { track } from '../../support/leak-guard.js';

export interface ChildConsumer {
  process: ChildProcess;
  output: () => string;
  /** SIGKILL: no graceful shutdown, no commit, nothing flushed. */
  killHard(): Promise<void>;
  /** SIGTERM and wait for the exit. */
  close(): Promise<void>;
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await once(child, 'exit');
}

export function startChildProgram(script: string, env: Record<string, string>): ChildConsumer {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const untrack = track(`child ${script} (pid ${child.pid})`, async () => {
    child.kill('SIGKILL');
    await exited(child);
  });
  return {
    process: child,
    output: () => output,
    killHard: async () => {
      child.kill('SIGKILL');
      await exited(child);
      await untrack();
    },
    close: async () => {
      child.kill('SIGTERM');
      await exited(child);
      await untrack();
    },
  };
}

/** Runs a command-line program to its end; its exit code and output. */
export async function runChildProgram(
  script: string,
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}
