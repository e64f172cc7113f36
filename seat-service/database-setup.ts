import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Logger } from '../lib/logger.js';
import { runMigrations } from '../lib/migrations.js';
import type { Pool } from '../lib/postgres.js';

export const SEAT_MIGRATIONS = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Creates the seat database when missing (connecting to the cluster's `postgres` database). */
export async function createSeatDatabase(adminUrl: string, logger: Logger): Promise<void> {
  const url = new URL(adminUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount === 0) {
      await client.query(`create database ${client.escapeIdentifier(name)}`);
      logger.info({ database: name }, 'created the seat database');
    }
  } finally {
    await client.end();
  }
}

export function migrateSeatDatabase(adminPool: Pool, logger: Logger): Promise<number[]> {
  return runMigrations({ pool: adminPool, folder: SEAT_MIGRATIONS, logger });
}

/** Gives the service and Debezium roles LOGIN and their passwords (the migrations create them NOLOGIN). */
export async function setupRoles(adminPool: Pool, passwords: { service: string; debezium: string }): Promise<void> {
  const client = await adminPool.connect();
  try {
    await client.query(`alter role stagefront_service login password ${client.escapeLiteral(passwords.service)}`);
    await client.query(`alter role stagefront_debezium login replication password ${client.escapeLiteral(passwords.debezium)}`);
  } finally {
    client.release();
  }
}
