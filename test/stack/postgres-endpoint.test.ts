/**
 * The primary endpoint against a real primary + standby of its own (the launcher's components, free
 * ports): new connections go to the primary; with the primary killed with -9 they are refused and
 * an open one breaks; after the promotion they go to the former standby; with the old primary
 * started again beside it (two writable nodes) they are refused as a split brain; with it gone
 * again they go to the promoted standby.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { postgresComponent } from '../../stack/postgres.js';
import { startPostgresEndpoint, type PostgresEndpoint } from '../../stack/postgres-endpoint.js';
import { adminUrl } from '../../stack/postgres-standby.js';
import { startSynchronizedPair, type SynchronizedPair } from '../failover/support/synchronized-pair.js';
import { testLogger } from '../support/seat-pipeline.js';
import { adminQuery, requireStack } from '../support/stack.js';

requireStack();

let pair: SynchronizedPair;
let endpoint: PostgresEndpoint;

beforeAll(async () => {
  pair = await startSynchronizedPair('endpoint');
  // No caching: every new connection asks the nodes, so each step below sees the state it made.
  endpoint = await startPostgresEndpoint({
    listenPort: 0,
    nodePorts: [pair.primaryPort, pair.standbyPort],
    checkUser: 'postgres',
    checkPassword: 'postgres',
    logger: testLogger,
    cacheMs: 0,
  });
}, 180_000);

afterAll(async () => {
  await endpoint?.close();
  await pair?.remove();
}, 120_000);

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port: endpoint.port,
    user: 'postgres',
    password: 'postgres',
    database: 'postgres',
    connectionTimeoutMillis: 5000,
  });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** The port of the server a new connection through the endpoint lands on, and whether it is writable. */
async function landsOn(): Promise<{ port: number; recovering: boolean }> {
  const client = await connect();
  try {
    const { rows } = await client.query<{ port: number; recovering: boolean }>(
      "select current_setting('port')::int as port, pg_is_in_recovery() as recovering",
    );
    return rows[0] as { port: number; recovering: boolean };
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('the primary endpoint', () => {
  it('follows the primary through a crash, a promotion and a split brain', async () => {
    expect(await landsOn()).toEqual({ port: pair.primaryPort, recovering: false });
    const held = await connect();
    expect((await held.query('select 1 as one')).rows).toEqual([{ one: 1 }]);

    await pair.killPrimary();
    // The open connection breaks with its node; new ones are refused (no node is writable) rather than sent to the standby.
    await expect(held.query('select 1')).rejects.toThrow();
    expect(await endpoint.route()).toMatchObject({ kind: 'none' });
    await expect(landsOn()).rejects.toThrow();

    await adminQuery(adminUrl(pair.standbyPort), /* sql */ `select pg_promote(true, 60)`);
    await waitFor(async () => (await endpoint.route()).kind === 'primary', {
      timeoutMs: 60_000,
      intervalMs: 200,
      description: 'the promoted standby to be the route',
    });
    expect(await landsOn()).toEqual({ port: pair.standbyPort, recovering: false });

    // The old primary started again as a primary: two writable nodes, so nobody gets a connection.
    const oldPrimary = postgresComponent(pair.layout);
    await waitFor(
      async () => {
        try {
          await oldPrimary.launch();
          return true;
        } catch {
          return false; // its orphaned backends may still hold the shared memory for a moment
        }
      },
      { timeoutMs: 60_000, intervalMs: 1000, description: 'the old primary to start again' },
    );
    await waitFor(() => oldPrimary.healthy(), {
      timeoutMs: 60_000,
      intervalMs: 200,
      description: 'the old primary to answer',
    });
    expect(await endpoint.route()).toEqual({ kind: 'split-brain', ports: [pair.primaryPort, pair.standbyPort] });
    await expect(landsOn()).rejects.toThrow();

    await oldPrimary.stop();
    expect(await landsOn()).toEqual({ port: pair.standbyPort, recovering: false });
    expect([...endpoint.open().values()].reduce((a, b) => a + b, 0)).toBe(0);
  }, 240_000);
});
