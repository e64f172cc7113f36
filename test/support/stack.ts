import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { beforeAll } from 'vitest';
import { stackEndpoints, stackLayout, startHint } from '../../stack/config.js';
import { stackStatus } from '../../stack/launcher.js';

export type StackEndpoints = ReturnType<typeof stackEndpoints>;

/** Endpoints of the stack the tests run against (the same settings the launcher reads). */
export function endpoints(): StackEndpoints {
  return stackEndpoints(stackLayout());
}

/**
 * Fails the test file at once, with the command that starts the stack, when any component of
 * the stack does not answer. Nothing that needs the stack is ever skipped.
 */
export function requireStack(): StackEndpoints {
  beforeAll(async () => {
    const down = (await stackStatus()).filter((c) => !c.healthy);
    if (down.length > 0) {
      const names = down.map((c) => `${c.name} (port ${c.port})`).join(', ');
      throw new Error(`The native stack is not running: ${names} did not answer. Start it with: ${startHint}`);
    }
  }, 30_000);
  return endpoints();
}

/** A name no other test uses: topics, consumer groups, schemas, connectors, databases. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

/** Creates a fresh database on the stack's cluster; returns its URL and a function that drops it. */
export async function createTestDatabase(
  prefix: string,
): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const { postgresAdminUrl } = endpoints();
  const name = uniqueName(prefix).toLowerCase();
  await adminQuery(postgresAdminUrl, `create database ${pg.escapeIdentifier(name)}`);
  const url = postgresAdminUrl.replace(/\/postgres$/, `/${name}`);
  return {
    url,
    name,
    drop: async () => {
      await adminQuery(postgresAdminUrl, `drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    },
  };
}

export async function adminQuery(url: string, sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}
