import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { type TestPostgres, startTestPostgres } from '../../../consumers/runtime/testing/index.js';
import type { Pool } from '../../../lib/postgres.js';
import { startHint } from '../../../stack/config.js';

/**
 * The admin URL of this file's Postgres, set by useTestPostgres's beforeAll: a throwaway cluster
 * (no stack needed), or TEST_POSTGRES_URL. Never a server assumed elsewhere.
 */
export let ADMIN_PG_URL = '';

/** Call first in the file (before the hooks that use ADMIN_PG_URL): starts its Postgres, and stops it last. */
export function useTestPostgres(): void {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    server = await startTestPostgres();
    ADMIN_PG_URL = server.adminUrl;
  }, 120_000);
  afterAll(() => server?.stop());
}

export const START_HINT = startHint;

/** A fresh schema name, unique per test, to be dropped afterwards with dropSchema. */
export function randomSchemaName(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

export async function dropSchema(pool: Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
}
