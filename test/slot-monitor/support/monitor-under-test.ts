/**
 * Runs the slot monitor for a test: in this process (startSlotMonitor) or as its own process
 * (`tsx monitors/slot-monitor/main.ts`, to be killed with -9). Settings go through the real table.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createLogger, isLogLevel } from '../../../lib/logger.js';
import { waitFor } from '../../../lib/wait.js';
import { parseSlotMonitorConfig } from '../../../monitors/slot-monitor/settings.js';
import { startSlotMonitor, type RunningSlotMonitor } from '../../../monitors/slot-monitor/slot-monitor.js';
import { projectRoot } from '../../../stack/config.js';
import { SCRAPE_TARGETS_SWITCH } from '../../../stack/scrape-targets.js';
import { track } from '../../support/leak-guard.js';

export type MonitorEnv = Record<string, string>;

/** An Alertmanager URL where nothing listens: an empty one means the default, the shared stack's Alertmanager. */
export const NO_ALERTMANAGER = 'http://127.0.0.1:1';

const MAIN = join(projectRoot, 'monitors/slot-monitor/main.ts');
/** `node --import tsx` runs the TypeScript in ONE process; the tsx CLI would fork a child that survives kill -9 of its parent. */
const TSX_IN_PROCESS = ['--import', 'tsx'];

/** How many polls of the monitor at `url` (http://host:port) have read the database, from its /metrics. */
export async function okPolls(url: string): Promise<number> {
  const metrics = await (await fetch(`${url}/metrics`)).text();
  return Number(/^slot_monitor_polls_total\{outcome="ok"[^}]*\} (\d+)/m.exec(metrics)?.[1] ?? 0);
}

/** Starts the monitor in this process, registered with the leak guard. SLOT_MONITOR_TEST_LOG_LEVEL=info shows its log. */
export async function startMonitorInProcess(
  env: MonitorEnv,
): Promise<RunningSlotMonitor & { close: () => Promise<void> }> {
  const config = parseSlotMonitorConfig({ SLOT_MONITOR_METRICS_PORT: '0', ...env });
  const level = process.env.SLOT_MONITOR_TEST_LOG_LEVEL;
  const logger = createLogger({
    name: 'slot-monitor-test',
    level: level !== undefined && isLogLevel(level) ? level : 'fatal',
  });
  const running = await startSlotMonitor(config, logger);
  const close = track('in-process slot monitor', () => running.stop());
  return { ...running, close };
}

export interface MonitorProcess {
  child: ChildProcess;
  /** http://127.0.0.1:port, from the monitor's "slot monitor running" log line. */
  metricsUrl: string;
  /** Log lines so far (JSON). */
  output: () => string;
  exited: Promise<number | null>;
  close: () => Promise<void>;
}

export async function startMonitorProcess(env: MonitorEnv): Promise<MonitorProcess> {
  const child = spawn(process.execPath, [...TSX_IN_PROCESS, MAIN], {
    cwd: projectRoot,
    env: {
      PATH: process.env.PATH ?? '',
      // Not the stack's monitor: it stays out of the stack's Prometheus (a killed one would read down there).
      [SCRAPE_TARGETS_SWITCH]: 'no',
      SLOT_MONITOR_METRICS_PORT: '0',
      SLOT_MONITOR_LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const append = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-200_000));
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const close = track('slot monitor process', async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const metricsUrl = await waitFor(() => /"metrics":"(http:\/\/[^"]+)\/metrics"/.exec(output)?.[1], {
    timeoutMs: 30_000,
    intervalMs: 100,
    description: `the slot monitor process to serve metrics (output: ${output.slice(-2000)})`,
  }).catch(async (err: unknown) => {
    await close();
    throw err;
  });
  return { child, metricsUrl, output: () => output, exited, close };
}

/** Runs the CLI to completion (for --help, bad configuration) and returns its exit code and output. */
export async function runMonitorCli(args: string[], env: MonitorEnv): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [...TSX_IN_PROCESS, MAIN, ...args], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', [SCRAPE_TARGETS_SWITCH]: 'no', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}
