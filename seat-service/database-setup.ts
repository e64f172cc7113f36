import type { Logger } from '../lib/logger.js';
import { runMigrations } from '../lib/migrations.js';
import { ensureDatabase, type Pool } from '../lib/postgres.js';
import { besideModule } from '../lib/source-tree.js';

const SEAT_MIGRATIONS = besideModule(import.meta.url, 'migrations');

/** Creates the database of `adminUrl` when missing (connecting to the cluster's `postgres` database). */
export async function createDatabaseIfMissing(adminUrl: string, logger: Logger): Promise<void> {
  const url = new URL(adminUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  if (await ensureDatabase(url.toString(), name)) logger.info({ database: name }, 'created the database');
}

export function migrateSeatDatabase(adminPool: Pool, logger: Logger): Promise<number[]> {
  return runMigrations({ pool: adminPool, folder: SEAT_MIGRATIONS, logger });
}

/** Gives the service and Debezium roles LOGIN and their passwords (the migrations create them NOLOGIN). */
export async function setupRoles(adminPool: Pool, passwords: { service: string; debezium: string }): Promise<void> {
  const client = await adminPool.connect();
  try {
    await client.query(`alter role stagefront_service login password ${client.escapeLiteral(passwords.service)}`);
    await client.query(
      `alter role stagefront_debezium login replication password ${client.escapeLiteral(passwords.debezium)}`,
    );
  } finally {
    client.release();
  }
}
