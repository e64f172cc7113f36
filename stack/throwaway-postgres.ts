/**
 * A Postgres cluster for one test run and nothing else: the stack's own cluster code
 * (`clusterComponent`, `initCluster`: the same binaries, settings, access rules and admin
 * password) in a temporary folder on a free loopback port, with durability off (its data is
 * thrown away), removed when stopped. What the fast tests (`npm test`) run on when no stack is up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackLayout } from './config.js';
import { clusterComponent, initCluster } from './postgres.js';

export interface ThrowawayPostgres {
  /** The admin role's URL (database `postgres`). */
  adminUrl: string;
  port: number;
  /** Stops the server and removes its folder. Safe to call twice. */
  stop(): Promise<void>;
}

/** How many ports after each of the stack's own a free port keeps clear of (its further brokers, Connect workers). */
const STACK_PORT_BAND = 20;

/** The ports the stack's components listen on, or may, under these settings (stackLayout's). */
function stackPortBands(): Array<[number, number]> {
  const s = stackLayout().settings;
  const own = [
    s.postgresPort,
    s.postgresStandbyPort,
    s.postgresEndpointPort,
    s.kafkaPort,
    s.kafkaControllerPort,
    s.connectPort,
    s.registryPort,
    s.registryManagementPort,
    s.alertmanagerPort,
    s.prometheusPort,
  ];
  return own.map((p) => [p, p + STACK_PORT_BAND]);
}

function listenOnAnyPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A loopback port nothing listens on right now (the kernel's choice), clear of the stack's ports:
 * a throwaway server must not take the port of a stack component a drill has stopped for a moment.
 */
export async function freePort(): Promise<number> {
  const bands = stackPortBands();
  for (;;) {
    const port = await listenOnAnyPort();
    if (!bands.some(([from, to]) => port >= from && port <= to)) return port;
  }
}

/** Nothing a test needs from a cluster that lives for seconds: no fsync, small memory. */
const THROWAWAY_SETTINGS = [
  'fsync = off',
  'synchronous_commit = off',
  'full_page_writes = off',
  'shared_buffers = 32MB',
  'max_connections = 100',
];

/** initdb and start with the system's Postgres binaries (the stack's prerequisite); throws with the fix when they are missing. */
export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  // The system binaries whatever the stack's settings: the standby setting's Maven binaries may not be fetched.
  const layout = stackLayout({ ...process.env, STACK_POSTGRES_BINARIES: 'system', STACK_POSTGRES_STANDBY: 'no' });
  const home = mkdtempSync(join(tmpdir(), 'stagefront-throwaway-pg-'));
  const port = await freePort();
  const cluster = clusterComponent(layout, {
    name: 'throwaway-postgres',
    port,
    home,
    dependsOn: [],
    prepare: (dataDir) => initCluster(layout, dataDir),
    settings: THROWAWAY_SETTINGS,
  });
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      try {
        await cluster.stop();
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    })());
  try {
    await cluster.launch();
  } catch (err) {
    await stop();
    throw err;
  }
  return { adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`, port, stop };
}
