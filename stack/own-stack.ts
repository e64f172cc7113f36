/**
 * A stack of one's own beside the shared one: its own home, every port a free one, the shared
 * downloads, small heaps, and whatever settings make it what it is (a redundant stack: two Connect
 * workers, three Kafka nodes, the standby). The bench's recovery scenario and the tests that kill
 * its parts start one through `npm run stack`, as a user would.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { projectRoot, stackLayout, stackSettings, type StackLayout } from './config.js';
import { postgresHome } from './postgres.js';
import { standbyHome } from './postgres-standby.js';
import { freePort } from './throwaway-postgres.js';

async function portFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free port whose next `count - 1` ports are free too. */
export async function freePortRun(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const base = await freePort();
    if (base + count > 65_535) continue;
    const rest = await Promise.all(Array.from({ length: count - 1 }, (_, i) => portFree(base + i + 1)));
    if (rest.every(Boolean)) return base;
  }
  throw new Error(`no run of ${count} free ports found`);
}

/** The settings of the redundant stack (docs/rehearsal.md), besides a home and ports of its own. */
export const REDUNDANT_STACK: Readonly<Record<string, string>> = {
  STACK_CONNECT_WORKERS: '2',
  STACK_KAFKA_BROKERS: '3',
  STACK_POSTGRES_STANDBY: 'yes',
  STACK_POSTGRES_BINARIES: 'auto',
};

/** One of everything, whatever the shell exports: the single-instance stack the redundant one is compared with. */
export const SINGLE_STACK: Readonly<Record<string, string>> = {
  STACK_CONNECT_WORKERS: '1',
  STACK_KAFKA_BROKERS: '1',
  STACK_POSTGRES_STANDBY: 'no',
};

/** Small heaps: two stacks share the machine. */
const SMALL_HEAPS: Readonly<Record<string, string>> = {
  STACK_KAFKA_HEAP_MB: '320',
  STACK_CONNECT_HEAP_MB: '320',
  STACK_REGISTRY_HEAP_MB: '384',
};

export interface OwnStack {
  /** What a program (the rehearsal) needs to run against it: STACK_HOME, every port, the settings. */
  env: Record<string, string>;
  layout: StackLayout;
  /** `npm run stack -- start|stop` against it; throws with the command's output on a failure. */
  command(command: 'start' | 'stop'): void;
  /** Its folders removed (stop it first). */
  remove(): void;
}

/**
 * A stack in `home` with `settings` (e.g. REDUNDANT_STACK): Kafka node n on STACK_KAFKA_PORT + 2(n - 1)
 * and its controller one above, Connect worker n on STACK_CONNECT_PORT + n - 1, from one run of free
 * ports; a free port for each other STACK_*_PORT. Nothing is started.
 */
export async function ownStack(home: string, settings: Readonly<Record<string, string>> = {}): Promise<OwnStack> {
  const shared = stackLayout();
  const env: Record<string, string> = { STACK_HOME: home, STACK_DIST: shared.dist, ...SMALL_HEAPS, ...settings };
  const draft = stackLayout({ ...process.env, ...env }).settings;
  const kafkaPorts = 2 * draft.kafkaBrokerCount;
  const span = kafkaPorts + draft.connectWorkers;
  const base = await freePortRun(span);
  env.STACK_KAFKA_PORT = String(base);
  env.STACK_KAFKA_CONTROLLER_PORT = String(base + 1);
  env.STACK_CONNECT_PORT = String(base + kafkaPorts);
  for (const setting of Object.values(stackSettings.settings)) {
    if (!setting.env.endsWith('_PORT') || env[setting.env] !== undefined) continue;
    let port = await freePort();
    while (port >= base && port < base + span) port = await freePort();
    env[setting.env] = String(port);
  }
  const layout = stackLayout({ ...process.env, ...env });
  return {
    env,
    layout,
    command(command) {
      const result = spawnSync('npm', ['run', '-s', 'stack', '--', command], {
        cwd: projectRoot,
        env: { ...process.env, ...env },
        encoding: 'utf8',
        timeout: 500_000,
      });
      if (result.status !== 0)
        throw new Error(`stack ${command} exited ${result.status}:\n${result.stdout}\n${result.stderr}`.slice(-4000));
    },
    remove() {
      for (const folder of [layout.home, standbyHome(layout), dirname(postgresHome(layout))])
        rmSync(folder, { recursive: true, force: true });
    },
  };
}
