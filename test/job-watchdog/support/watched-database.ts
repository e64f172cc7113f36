/**
 * A seat database of its own for a job watchdog test: migrated, the service role able to log in,
 * the watchdog role with SELECT on job_runs and holds only; and a hold sweeper run as a child process.
 */
import { join } from 'node:path';
import { createLogger } from '../../../lib/logger.js';
import { createPool } from '../../../lib/postgres.js';
import { ensureWatchdogRole } from '../../../monitors/job-watchdog/watchdog-role.js';
import { migrateSeatDatabase, setupRoles } from '../../../seat-service/database-setup.js';
import { projectRoot } from '../../../stack/config.js';
import { startChildProgram, type ChildConsumer } from '../../consumers/helpers/child-consumer.js';
import { freePort } from '../../slot-monitor/support/alertmanager-process.js';
import { adminQuery, createTestDatabase, endpoints } from '../../support/stack.js';

const logger = createLogger({ name: 'job-watchdog-test', level: 'warn' });

export const WATCHDOG_ROLE = 'job_watchdog';
const WATCHDOG_PASSWORD = 'job_watchdog';

export interface WatchedDatabase {
  adminUrl: string;
  serviceUrl: string;
  watchdogUrl: string;
  admin(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  drop(): Promise<void>;
}

export async function createWatchedDatabase(prefix: string): Promise<WatchedDatabase> {
  const database = await createTestDatabase(prefix);
  const pool = createPool({ connectionString: database.url, applicationName: 'job-watchdog-test', logger, max: 1 });
  try {
    await migrateSeatDatabase(pool, logger);
    await setupRoles(pool, { service: 'stagefront_service', debezium: 'stagefront_debezium' });
    await ensureWatchdogRole(pool, { role: WATCHDOG_ROLE, password: WATCHDOG_PASSWORD });
  } finally {
    await pool.end();
  }
  return {
    adminUrl: database.url,
    serviceUrl: database.url.replace('postgres:postgres@', 'stagefront_service:stagefront_service@'),
    watchdogUrl: database.url.replace('postgres:postgres@', `${WATCHDOG_ROLE}:${WATCHDOG_PASSWORD}@`),
    admin: async (sql, params = []) => (await adminQuery(database.url, sql, params)).rows as Record<string, unknown>[],
    drop: database.drop,
  };
}

export interface SweeperProcess extends ChildConsumer {
  metricsUrl: string;
}

/** `node --import tsx seat-service/sweeper-main.ts` against the database, on a free metrics port. */
export async function startSweeperProcess(database: WatchedDatabase, intervalMs: number): Promise<SweeperProcess> {
  const port = await freePort();
  const child = startChildProgram(join(projectRoot, 'seat-service', 'sweeper-main.ts'), {
    SEAT_DB_URL: database.serviceUrl,
    SCHEMA_REGISTRY_URL: endpoints().registryUrl,
    HOLD_SWEEPER_INTERVAL_MS: String(intervalMs),
    HOLD_SWEEPER_METRICS_PORT: String(port),
    LOG_LEVEL: 'warn',
  });
  return { ...child, metricsUrl: `http://127.0.0.1:${port}/metrics` };
}
