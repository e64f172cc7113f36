import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../stack/config.js';

export interface RunningProgram {
  name: string;
  logFile: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Runs one of the project's programs as a child process (one process: node --import tsx), output to a log file. */
export function startProgram(name: string, entry: string, env: NodeJS.ProcessEnv, logDir: string): RunningProgram {
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `rehearsal-${name}.log`);
  const log = openSync(logFile, 'w');
  const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, entry)], {
    cwd: projectRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    name,
    logFile,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
