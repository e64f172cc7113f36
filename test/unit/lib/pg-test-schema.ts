import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Pool } from '../../../lib/postgres.js';
import { startHint } from '../../../stack/config.js';
import { endpoints } from '../../support/stack.js';

/** The admin URL of the stack's own Postgres cluster (the launcher's settings), never a server assumed elsewhere. */
export const ADMIN_PG_URL = endpoints().postgresAdminUrl;

export const START_HINT = startHint;

/** A fresh schema name, unique per test, to be dropped afterwards with dropSchema. */
export function randomSchemaName(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

export async function dropSchema(pool: Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
}
