/**
 * What a rehearsal needs before its programs start, natively or in docker compose: the seat
 * database created and migrated with its roles, the slot monitor's and job watchdog's roles, and
 * the consumer database owned by the consumers' own role. Idempotent.
 */
import { ensureConsumerRole } from '../consumers/runtime/consumer-role.js';
import type { Logger } from '../lib/logger.js';
import { createPool } from '../lib/postgres.js';
import { ensureWatchdogRole } from '../monitors/job-watchdog/watchdog-role.js';
import { ensureMonitorRole } from '../monitors/slot-monitor/monitor-role.js';
import { createDatabaseIfMissing, migrateSeatDatabase, setupRoles } from '../seat-service/database-setup.js';

/** The roles the programs log in as, the same natively and in compose. */
export const REHEARSAL_ROLES = {
  consumer: 'stagefront_consumer',
  slotMonitor: 'slot_monitor',
  jobWatchdog: 'job_watchdog',
} as const;

export interface RehearsalDatabases {
  /** Superuser URLs of the two databases (created if missing). */
  seatAdminUrl: string;
  consumerAdminUrl: string;
  passwords: { service: string; debezium: string; slotMonitor: string; jobWatchdog: string; consumer: string };
  /** A name for the setup's connections (application_name). */
  applicationName: string;
}

/** Creates what is missing; returns the seat database's migrations applied now. */
export async function prepareRehearsalDatabases(options: RehearsalDatabases, logger: Logger): Promise<number[]> {
  const { passwords } = options;
  await createDatabaseIfMissing(options.seatAdminUrl, logger);
  await createDatabaseIfMissing(options.consumerAdminUrl, logger);
  const seatAdmin = createPool({
    connectionString: options.seatAdminUrl,
    applicationName: options.applicationName,
    logger,
    max: 1,
  });
  let applied: number[];
  try {
    applied = await migrateSeatDatabase(seatAdmin, logger);
    await setupRoles(seatAdmin, { service: passwords.service, debezium: passwords.debezium });
    await ensureMonitorRole(seatAdmin, { role: REHEARSAL_ROLES.slotMonitor, password: passwords.slotMonitor });
    await ensureWatchdogRole(seatAdmin, { role: REHEARSAL_ROLES.jobWatchdog, password: passwords.jobWatchdog });
  } finally {
    await seatAdmin.end();
  }
  const consumerAdmin = createPool({
    connectionString: options.consumerAdminUrl,
    applicationName: options.applicationName,
    logger,
    max: 1,
  });
  try {
    await ensureConsumerRole(consumerAdmin, { role: REHEARSAL_ROLES.consumer, password: passwords.consumer });
  } finally {
    await consumerAdmin.end();
  }
  return applied;
}
