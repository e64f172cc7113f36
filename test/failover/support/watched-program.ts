/** A command-line program run as a child process whose output can be watched while it runs (node --import tsx). */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { track } from '../../support/leak-guard.js';

export interface WatchedProgram {
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Its exit code and whole output, once it ended. */
  finished: Promise<{ code: number | null; output: string }>;
}

export function runWatchedProgram(script: string, env: Record<string, string>, args: string[]): WatchedProgram {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit') as Promise<[number | null]>;
  const untrack = track(`program ${script} (pid ${child.pid})`, async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const finished = exited.then(async ([code]) => {
    await untrack();
    return { code, output };
  });
  return { output: () => output, finished };
}
