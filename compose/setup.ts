/**
 * `npm run compose:setup`: what the native rehearsal does before it starts its programs, for
 * docker compose, where the programs are services that need their databases and roles to exist
 * first: the seat database created and migrated with its roles, the monitors' roles, and the
 * consumer database owned by the consumers' own role. Idempotent: every `docker compose up`
 * runs it again. The connector is applied after it by `npm run connector -- apply`.
 */
import { startProgram } from '../lib/cli.js';
import type { Logger } from '../lib/logger.js';
import { createPool } from '../lib/postgres.js';
import type { Config } from '../lib/settings.js';
import { ensureConsumerRole } from '../consumers/runtime/consumer-role.js';
import { ensureWatchdogRole } from '../monitors/job-watchdog/watchdog-role.js';
import { ensureMonitorRole } from '../monitors/slot-monitor/monitor-role.js';
import { createDatabaseIfMissing, migrateSeatDatabase, setupRoles } from '../seat-service/database-setup.js';
import { COMPOSE_ROLES, composeSetupSettings } from './setup-settings.js';

const USAGE = `Usage: npm run compose:setup

Creates and migrates the seat database, gives its roles their passwords, creates the slot
monitor's and job watchdog's roles, and creates the consumer database owned by the consumers'
role. Safe to run again.`;

async function main(config: Config<typeof composeSetupSettings.settings>, _args: string[], logger: Logger): Promise<number> {
  await createDatabaseIfMissing(config.seatAdminUrl, logger);
  await createDatabaseIfMissing(config.consumerAdminUrl, logger);
  const seatAdmin = createPool({ connectionString: config.seatAdminUrl, applicationName: 'compose-setup', logger, max: 1 });
  try {
    const applied = await migrateSeatDatabase(seatAdmin, logger);
    await setupRoles(seatAdmin, { service: config.servicePassword, debezium: config.debeziumPassword });
    await ensureMonitorRole(seatAdmin, { role: COMPOSE_ROLES.slotMonitor, password: config.slotMonitorPassword });
    await ensureWatchdogRole(seatAdmin, { role: COMPOSE_ROLES.jobWatchdog, password: config.jobWatchdogPassword });
    logger.info({ applied }, 'seat database ready');
  } finally {
    await seatAdmin.end();
  }
  const consumerAdmin = createPool({ connectionString: config.consumerAdminUrl, applicationName: 'compose-setup', logger, max: 1 });
  try {
    await ensureConsumerRole(consumerAdmin, { role: COMPOSE_ROLES.consumer, password: config.consumerPassword });
    logger.info('consumer database ready');
  } finally {
    await consumerAdmin.end();
  }
  return 0;
}

startProgram({ settings: composeSetupSettings, usage: USAGE, main });
