/**
 * The primary endpoint (STACK_POSTGRES_STANDBY=yes): what a virtual IP or a health-checked proxy
 * is in production, on this machine. A TCP forwarder on a port of its own sends each NEW connection
 * to whichever node answers pg_is_in_recovery() = false, so the programs, the registry and the
 * consumer database follow a failover without being told. The answer is cached briefly. No node
 * writable: the connection is refused (closed at once) and the client retries. Two nodes writable:
 * refused too, and logged as a split brain. A connection keeps its node: when that node dies it
 * breaks and the client reconnects (through the endpoint, to the new primary); when the route moves
 * away from a node that still answers, its connections are cut so none keeps writing there.
 *
 * Run by the launcher as a process of its own: `node --import tsx stack/postgres-endpoint.ts
 * --listen <port> --nodes <port>,<port>`.
 */
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createLogger, type Logger } from '../lib/logger.js';
import type { Component } from './component.js';
import { ownedPid } from './component.js';
import { answersQuery } from './postgres.js';
import { projectRoot, type StackLayout } from './config.js';
import { portOpen, spawnDetached, stopProcess } from './processes.js';

const HOST = '127.0.0.1';
/** How long one answer about which node is the primary is reused for new connections. */
const ROUTE_CACHE_MS = 500;
const CHECK_TIMEOUT_MS = 1000;

/** Where new connections go: one node, or nowhere and why. */
type Route =
  { kind: 'primary'; port: number } | { kind: 'none'; reason: string } | { kind: 'split-brain'; ports: number[] };

export interface EndpointOptions {
  listenPort: number;
  /** The nodes' ports on 127.0.0.1, in the order they are asked. */
  nodePorts: number[];
  /** Who asks the nodes whether they are in recovery (any role may call pg_is_in_recovery()). */
  checkUser: string;
  checkPassword: string;
  logger: Logger;
  cacheMs?: number;
}

export interface PostgresEndpoint {
  port: number;
  /** Where a new connection would go now (asks the nodes unless a fresh answer is cached). */
  route(): Promise<Route>;
  /** Connections being forwarded, per node port. */
  open(): Map<number, number>;
  close(): Promise<void>;
}

/** True when the node on `port` accepts a connection and is not in recovery; false when it is a standby or does not answer. */
async function writable(port: number, options: EndpointOptions): Promise<boolean> {
  const client = new pg.Client({
    host: HOST,
    port,
    user: options.checkUser,
    password: options.checkPassword,
    database: 'postgres',
    connectionTimeoutMillis: CHECK_TIMEOUT_MS,
    query_timeout: CHECK_TIMEOUT_MS,
    application_name: 'stagefront-endpoint',
  });
  client.on('error', () => undefined); // a node dying under the check is an answer, not a crash
  try {
    await client.connect();
    const { rows } = await client.query<{ recovering: boolean }>('select pg_is_in_recovery() as recovering');
    return rows[0]?.recovering === false;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The routing rule: exactly one node not in recovery gets the connection. */
function chooseRoute(nodePorts: readonly number[], isWritable: readonly boolean[]): Route {
  const primaries = nodePorts.filter((_, i) => isWritable[i] === true);
  if (primaries.length === 1) return { kind: 'primary', port: primaries[0] as number };
  if (primaries.length === 0)
    return { kind: 'none', reason: `no node is writable (ports ${nodePorts.join(', ')}: down or in recovery)` };
  return { kind: 'split-brain', ports: primaries };
}

export async function startPostgresEndpoint(options: EndpointOptions): Promise<PostgresEndpoint> {
  const { logger } = options;
  const cacheMs = options.cacheMs ?? ROUTE_CACHE_MS;
  const sockets = new Map<number, Set<net.Socket>>();
  let cached: { route: Route; at: number } | undefined;
  let asking: Promise<Route> | undefined;
  let lastKind = '';

  const ask = async (): Promise<Route> => {
    const answers = await Promise.all(options.nodePorts.map((port) => writable(port, options)));
    const route = chooseRoute(options.nodePorts, answers);
    const kind = route.kind === 'primary' ? `primary:${route.port}` : route.kind;
    if (kind !== lastKind) {
      if (route.kind === 'primary') logger.info({ port: route.port }, 'new connections go to the primary on this port');
      else if (route.kind === 'none')
        logger.warn({ reason: route.reason }, 'no primary: new connections are refused until one answers');
      else
        logger.error(
          { ports: route.ports },
          'SPLIT BRAIN: more than one node is writable; every new connection is refused until only one is',
        );
      lastKind = kind;
    }
    if (route.kind === 'primary') {
      // Connections still open to a node that is no longer the primary are cut: clients reconnect here.
      for (const [port, open] of sockets) {
        if (port === route.port || open.size === 0) continue;
        logger.warn({ port, connections: open.size }, 'cutting connections to a node that is no longer the primary');
        for (const socket of open) socket.destroy();
      }
    }
    cached = { route, at: Date.now() };
    return route;
  };
  const route = (): Promise<Route> => {
    if (cached !== undefined && Date.now() - cached.at < cacheMs) return Promise.resolve(cached.route);
    asking ??= ask().finally(() => (asking = undefined));
    return asking;
  };

  const forward = async (client: net.Socket): Promise<void> => {
    client.on('error', () => undefined);
    const target = await route();
    if (target.kind !== 'primary' || client.destroyed) {
      client.destroy();
      return;
    }
    const upstream = net.connect({ host: HOST, port: target.port });
    const open = sockets.get(target.port) ?? new Set<net.Socket>();
    sockets.set(target.port, open);
    open.add(client);
    const end = () => {
      open.delete(client);
      client.destroy();
      upstream.destroy();
    };
    upstream.on('error', end);
    upstream.on('close', end);
    client.on('close', end);
    upstream.once('connect', () => {
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  };

  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    forward(client).catch((err: unknown) => {
      logger.error({ err }, 'could not forward a connection');
      client.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.listenPort, HOST, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.listenPort;
  logger.info({ port, nodes: options.nodePorts }, 'primary endpoint listening');
  return {
    port,
    route,
    open: () => new Map([...sockets].map(([p, set]) => [p, set.size])),
    async close() {
      for (const open of sockets.values()) for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const ENTRY = join(projectRoot, 'stack', 'postgres-endpoint.ts');

/** The endpoint as a component of the stack: a process of its own with a pid file and a log. */
export function postgresEndpointComponent(layout: StackLayout): Component {
  const s = layout.settings;
  const pidFile = join(layout.runDir, 'postgres-endpoint.pid');
  const logFile = join(layout.logDir, 'postgres-endpoint.log');
  const args = ['--listen', String(s.postgresEndpointPort), '--nodes', `${s.postgresPort},${s.postgresStandbyPort}`];
  const marker = `${ENTRY} ${args.join(' ')}`;
  return {
    name: 'postgres-endpoint',
    port: s.postgresEndpointPort,
    logFile,
    dependsOn: ['postgres'],
    pid: () => ownedPid(pidFile, marker),
    // Up and forwarding to a primary: a query through it is answered.
    async healthy() {
      return (
        (await portOpen(s.postgresEndpointPort)) &&
        answersQuery(`postgres://postgres:postgres@${HOST}:${s.postgresEndpointPort}/postgres`)
      );
    },
    async launch() {
      spawnDetached({
        command: process.execPath,
        args: ['--import', 'tsx', ENTRY, ...args],
        logFile,
        pidFile,
        cwd: projectRoot,
      });
      await Promise.resolve();
    },
    async stop() {
      const pid = ownedPid(pidFile, marker);
      if (pid !== undefined) await stopProcess(pid, 5000);
    },
  };
}

function argument(argv: readonly string[], name: string): string {
  const value = argv[argv.indexOf(name) + 1];
  if (!argv.includes(name) || value === undefined)
    throw new Error(`postgres-endpoint: ${name} is required (--listen <port> --nodes <port>,<port>)`);
  return value;
}

async function main(argv: readonly string[]): Promise<void> {
  const logger = createLogger({ name: 'postgres-endpoint' });
  const endpoint = await startPostgresEndpoint({
    listenPort: Number(argument(argv, '--listen')),
    nodePorts: argument(argv, '--nodes').split(',').map(Number),
    checkUser: 'postgres',
    checkPassword: 'postgres',
    logger,
  });
  const stop = () => {
    logger.info('stopping');
    void endpoint.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
