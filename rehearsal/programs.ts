import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../lib/wait.js';
import type { Supervised } from '../stack/supervisor.js';
import { buildPrograms, compiledEntry, projectRoot } from '../lib/source-tree.js';

export interface RunningProgram {
  name: string;
  logFile: string;
  child: ChildProcess;
  /** SIGTERM, SIGKILL after 15 s; resolves when the process is gone. */
  stop(): Promise<void>;
  /** SIGKILL at once (a drill): no shutdown hook runs. Resolves when the process is gone. */
  kill(): Promise<void>;
}

/** Runs one of the project's programs, compiled (dist/), as a child process, output appended to a log file. */
function startProgram(name: string, entry: string, env: NodeJS.ProcessEnv, logDir: string): RunningProgram {
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `rehearsal-${name}.log`);
  // Appended: a program restarted by a drill keeps the log of its first life.
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--enable-source-maps', compiledEntry(entry)], {
    cwd: projectRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  return {
    name,
    logFile,
    child,
    async stop() {
      if (gone()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (gone()) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** What it takes to start a program again: a drill restarts it with the same entry and environment. */
export interface ProgramSpec {
  name: string;
  entry: string;
  env: NodeJS.ProcessEnv;
  /** Port of its /readyz (and /metrics). */
  readyPort: number;
}

/** The rehearsal's own programs, by name: started, restarted after a drill, stopped in a given order. */
export class ProgramSet {
  readonly #logDir: string;
  readonly #specs = new Map<string, ProgramSpec>();
  readonly #running = new Map<string, RunningProgram>();

  /** Builds the programs first (npm run build): what it starts is the sources as they are now. */
  constructor(logDir: string) {
    this.#logDir = logDir;
    buildPrograms();
  }

  /** Starts it and waits until its /readyz answers; a program that exits first fails with its log file named. */
  async start(spec: ProgramSpec): Promise<RunningProgram> {
    this.#specs.set(spec.name, spec);
    const program = startProgram(spec.name, spec.entry, spec.env, this.#logDir);
    this.#running.set(spec.name, program);
    await this.ready(spec.name);
    return program;
  }

  async ready(name: string, timeoutMs = 60_000): Promise<void> {
    const program = this.get(name);
    const port = this.#spec(name).readyPort;
    await waitFor(
      async () => {
        if (program.child.exitCode !== null)
          throw new Error(`${name} exited (${program.child.exitCode}); see ${program.logFile}`);
        return (
          await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined)
        )?.ok;
      },
      { timeoutMs, intervalMs: 250, description: `${name} to be ready (log: ${program.logFile})` },
    );
  }

  /** Starts a program again with its first start's settings (after a drill killed it). */
  async restart(name: string): Promise<void> {
    await this.start(this.#spec(name));
  }

  /** The program under the supervisor: alive while its process runs, started again with its first start's settings. */
  supervised(name: string): Supervised {
    return {
      name,
      alive: () => {
        const { child } = this.get(name);
        return child.exitCode === null && child.signalCode === null;
      },
      start: () => this.restart(name),
    };
  }

  get(name: string): RunningProgram {
    const program = this.#running.get(name);
    if (program === undefined) throw new Error(`the rehearsal has no program named ${name}`);
    return program;
  }

  names(): string[] {
    return [...this.#running.keys()];
  }

  logFiles(): string[] {
    return [...new Set([...this.#running.values()].map((p) => p.logFile))];
  }

  /** Stops the named programs first, one after the other, then the rest together. */
  async stopAll(first: readonly string[] = []): Promise<void> {
    for (const name of first) await this.#running.get(name)?.stop();
    await Promise.all([...this.#running.values()].map((p) => p.stop()));
  }

  #spec(name: string): ProgramSpec {
    const spec = this.#specs.get(name);
    if (spec === undefined) throw new Error(`the rehearsal has no program named ${name}`);
    return spec;
  }
}
