import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Pool } from '../../../lib/postgres.js';

/** The real Postgres of this machine (trust auth); override with TEST_ADMIN_PG_URL. */
export const ADMIN_PG_URL = process.env.TEST_ADMIN_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const START_HINT = 'npm run stack -- start';

/** A fresh schema name, unique per test, to be dropped afterwards with dropSchema. */
export function randomSchemaName(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

export async function dropSchema(pool: Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
}
