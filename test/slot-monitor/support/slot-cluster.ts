/**
 * Postgres clusters just for slot tests, started with the launcher's own postgresComponent (their
 * own port and folder), so invalidating slots never touches the shared stack: the slot-test
 * cluster (1 MB WAL segments) and a cluster with every stack default.
 */
import { rmSync } from 'node:fs';
import pg from 'pg';
import { ensureMonitorRole } from '../../../monitors/slot-monitor/monitor-role.js';
import { stackLayout } from '../../../stack/config.js';
import { postgresComponent, postgresHome } from '../../../stack/postgres.js';
import { waitFor } from '../../../lib/wait.js';
import { adminQuery, uniqueName } from '../../support/stack.js';

/** SLOT_TEST_CLUSTER_PORT moves it, when another checkout's tests hold 54339. */
const SLOT_CLUSTER_PORT = Number(process.env.SLOT_TEST_CLUSTER_PORT ?? 54339);
/** A cluster made by the launcher with every stack default (only home and port differ): what a fresh stack runs. FRESH_STACK_TEST_CLUSTER_PORT moves it. */
const FRESH_STACK_CLUSTER_PORT = Number(process.env.FRESH_STACK_TEST_CLUSTER_PORT ?? 54348);

export interface SlotCluster {
  adminUrl: string;
  port: number;
  /** URL of `database` as `user`:`password` (the admin by default). */
  urlFor(database: string, user?: string, password?: string): string;
  admin(sql: string, params?: unknown[], database?: string): Promise<pg.QueryResult>;
  createDatabase(prefix: string): Promise<string>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

function clusterLayout(home: string, port: number, settings: Record<string, string> = {}) {
  return stackLayout({ ...process.env, STACK_HOME: home, STACK_POSTGRES_PORT: String(port), ...settings });
}

function testCluster(layout: ReturnType<typeof clusterLayout>): SlotCluster {
  const component = postgresComponent(layout);
  const port = layout.settings.postgresPort;
  const urlFor = (database: string, user = 'postgres', password = 'postgres') =>
    `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  const admin = (sql: string, params: unknown[] = [], database = 'postgres') =>
    adminQuery(urlFor(database), sql, params);
  return {
    adminUrl: urlFor('postgres'),
    port,
    urlFor,
    admin,
    async createDatabase(prefix) {
      const name = uniqueName(prefix).toLowerCase();
      await admin(/* sql */ `create database ${pg.escapeIdentifier(name)}`);
      return name;
    },
    async start() {
      if (await component.healthy()) {
        if (component.pid() !== undefined) return;
        throw new Error(
          `port ${port} answers, but not with the cluster of ${layout.home} (another checkout's tests?): stop that one, or wait for it`,
        );
      }
      if (component.pid() === undefined) await component.launch();
      await waitFor(() => component.healthy(), {
        timeoutMs: 60_000,
        intervalMs: 200,
        description: `test Postgres on ${port}`,
      });
    },
    stop: () => component.stop(),
  };
}

/** Starts (or reuses) the slot-test cluster (1 MB WAL segments, no cap in its file) with every ALTER SYSTEM setting reset. */
export async function startSlotCluster(): Promise<SlotCluster> {
  const cluster = testCluster(
    clusterLayout('.stack/slot-test', SLOT_CLUSTER_PORT, {
      STACK_POSTGRES_WAL_SEGMENT_MB: '1',
      STACK_POSTGRES_MAX_SLOT_WAL_KEEP_SIZE: '-1',
    }),
  );
  await cluster.start();
  await dropLeftovers(cluster.admin);
  await cluster.admin(/* sql */ `alter system reset all`);
  await cluster.admin(/* sql */ `select pg_reload_conf()`);
  const segment = (await cluster.admin(/* sql */ `show wal_segment_size`)).rows[0] as { wal_segment_size: string };
  if (segment.wal_segment_size !== '1MB') {
    throw new Error(
      `the slot-test cluster has ${segment.wal_segment_size} WAL segments, not 1MB: delete .stack/slot-test and run again`,
    );
  }
  return cluster;
}

/**
 * A cluster created now by the launcher with the stack's default settings, as `npm run stack -- start`
 * makes on a fresh machine. `remove()` stops it and deletes its folder, so the next one is fresh too.
 */
export async function startFreshStackCluster(): Promise<SlotCluster & { remove(): Promise<void> }> {
  const layout = clusterLayout('.stack/fresh-stack-test', FRESH_STACK_CLUSTER_PORT);
  const cluster = testCluster(layout);
  const remove = async () => {
    await cluster.stop();
    rmSync(postgresHome(layout), { recursive: true, force: true });
  };
  await remove();
  await cluster.start();
  return { ...cluster, remove };
}

/** A run that crashed may have left slots and databases behind on this test-only cluster: drop them. */
async function dropLeftovers(admin: (sql: string) => Promise<pg.QueryResult>): Promise<void> {
  await admin(/* sql */ `select pg_drop_replication_slot(slot_name) from pg_replication_slots where not active`);
  const { rows } = await admin(
    /* sql */ `select datname from pg_database where not datistemplate and datname <> 'postgres'`,
  );
  for (const { datname } of rows as { datname: string }[]) {
    await admin(/* sql */ `drop database if exists ${pg.escapeIdentifier(datname)} with (force)`).catch(
      () => undefined,
    );
  }
}

/** Applies ALTER SYSTEM settings on the cluster and reloads. Values are test constants. */
export async function setClusterSettings(cluster: SlotCluster, settings: Record<string, string>): Promise<void> {
  for (const [name, value] of Object.entries(settings)) {
    await cluster.admin(/* sql */ `alter system set ${pg.escapeIdentifier(name)} = ${pg.escapeLiteral(value)}`);
  }
  await cluster.admin(/* sql */ `select pg_reload_conf()`);
}

export const MONITOR_ROLE = { role: 'slot_monitor', password: 'slot-monitor-pw' } as const;

/** Creates (or refreshes) the monitor role on the cluster with the production helper; returns its URL for `database`. */
export async function monitorRoleUrl(cluster: SlotCluster, database: string): Promise<string> {
  // Connected to the seat database itself: EXECUTE on pg_reload_conf() is granted per database.
  const client = new pg.Client({ connectionString: cluster.urlFor(database) });
  await client.connect();
  try {
    await ensureMonitorRole(client, MONITOR_ROLE);
  } finally {
    await client.end();
  }
  return cluster.urlFor(database, MONITOR_ROLE.role, MONITOR_ROLE.password);
}
