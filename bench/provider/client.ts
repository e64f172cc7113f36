/**
 * Starts the email provider (./main.ts) as a child process, so that its CPU is not the caller's, and
 * drives it over its control API: what the bench, the rehearsal and the tests use.
 *
 *   const provider = await spawnProvider({ acceptDelayMs: 150, maxConnections: 50 });
 *   // point the consumer at 127.0.0.1:provider.smtpPort …
 *   await provider.setThrottle(200);
 *   const { accepted, refused, duplicates } = await provider.stats();
 *   await provider.stop();
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { LogLevel } from '../../lib/logger.js';
import { compiledEntry, projectRoot } from '../../lib/source-tree.js';
import { providerSettings } from './settings.js';
import type { ProviderStats } from './tally.js';

export interface SpawnProviderOptions {
  /** 0 (the default) lets the system pick a free port. */
  smtpPort?: number;
  /** Default 100. */
  acceptDelayMs?: number;
  /** Default 500. */
  maxConnections?: number;
  /** Messages per second before 451; undefined (the default) accepts every message. */
  ratePerSecond?: number;
  /** The child's log level (its logs go to its stderr, kept for error messages); default warn. */
  logLevel?: LogLevel;
  /** How long the child may take to listen; default 30 s. */
  startTimeoutMs?: number;
}

export interface ProviderProcess {
  smtpPort: number;
  stats(): Promise<ProviderStats>;
  /** The Message-ID of every accepted message, in the order accepted, repeats included. */
  messageIds(): Promise<string[]>;
  /** Throttling on at `ratePerSecond` (451 beyond it), or off with undefined. */
  setThrottle(ratePerSecond: number | undefined): Promise<void>;
  setDelay(acceptDelayMs: number): Promise<void>;
  /** Forgets the counts and Message-IDs. */
  reset(): Promise<void>;
  /** SIGTERM (SIGKILL after 5 s); resolves when the process is gone. */
  stop(): Promise<void>;
}

const ENTRY = compiledEntry('bench/provider/main.ts');
const STDERR_TAIL_CHARS = 4000;
const STOP_GRACE_MS = 5000;

/** The child's environment: the caller's, with the options as the provider's settings. */
function providerEnv(options: SpawnProviderOptions): NodeJS.ProcessEnv {
  const { settings } = providerSettings;
  const given: [string, string | number | undefined][] = [
    [settings.smtpPort.env, options.smtpPort],
    [settings.httpPort.env, 0],
    [settings.acceptDelayMs.env, options.acceptDelayMs],
    [settings.maxConnections.env, options.maxConnections],
    [settings.throttleRate.env, options.ratePerSecond ?? 0],
    [settings.logLevel.env, options.logLevel ?? 'warn'],
  ];
  const env = { ...process.env };
  for (const [name, value] of given) if (value !== undefined) env[name] = String(value);
  return env;
}

function portsOf(line: string): { smtpPort: number; httpPort: number } | undefined {
  try {
    const parsed = JSON.parse(line) as { smtpPort?: unknown; httpPort?: unknown };
    const { smtpPort, httpPort } = parsed;
    return typeof smtpPort === 'number' && typeof httpPort === 'number' ? { smtpPort, httpPort } : undefined;
  } catch {
    return undefined;
  }
}

/** Starts `npm run smtp-provider` as a child and waits until it listens; a failed start names its stderr. */
export async function spawnProvider(options: SpawnProviderOptions = {}): Promise<ProviderProcess> {
  const child = spawn(process.execPath, ['--enable-source-maps', ENTRY], {
    cwd: projectRoot,
    env: providerEnv(options),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS)));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const failure = (what: string) =>
    new Error(`the email provider (${ENTRY}) ${what}; its stderr ended with:\n${stderr.trimEnd() || '(nothing)'}`);

  const timeoutMs = options.startTimeoutMs ?? 30_000;
  const lines = createInterface({ input: child.stdout });
  const ports = await new Promise<{ smtpPort: number; httpPort: number }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(failure(`did not listen within ${timeoutMs} ms and was killed`));
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(failure(`could not be started (${err.message})`));
    });
    lines.on('line', (line) => {
      const found = portsOf(line);
      if (found === undefined) return;
      clearTimeout(timer);
      resolve(found);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(failure(`exited (code ${child.exitCode ?? child.signalCode}) before it listened`));
    });
  });

  const base = `http://127.0.0.1:${ports.httpPort}`;
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> => {
    if (gone()) throw failure(`is not running (it exited with ${child.exitCode ?? child.signalCode})`);
    const response = await fetch(`${base}${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok)
      throw new Error(`email provider: ${method} ${path} answered ${response.status} ${await response.text()}`);
    return response;
  };

  return {
    smtpPort: ports.smtpPort,
    stats: async () => (await (await call('GET', '/stats')).json()) as ProviderStats,
    messageIds: async () => (await (await call('GET', '/message-ids')).json()) as string[],
    setThrottle: async (ratePerSecond) => {
      await call('POST', '/throttle', ratePerSecond === undefined ? { off: true } : { ratePerSecond });
    },
    setDelay: async (acceptDelayMs) => {
      await call('POST', '/delay', { acceptDelayMs });
    },
    reset: async () => {
      await call('POST', '/reset');
    },
    async stop() {
      if (!gone()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      await exited;
    },
  };
}
