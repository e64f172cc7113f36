/**
 * `npm run compose:setup`: what the native rehearsal does before it starts its programs, for
 * docker compose, where the programs are services that need their databases and roles to exist
 * first: the seat database created and migrated with its roles, the monitors' roles, and the
 * consumer database owned by the consumers' own role. Idempotent: every `docker compose up`
 * runs it again. The connector is applied after it by `npm run connector -- apply`.
 */
import { startProgram } from '../lib/cli.js';
import type { Logger } from '../lib/logger.js';
import type { Config } from '../lib/settings.js';
import { prepareRehearsalDatabases } from '../rehearsal/databases.js';
import { composeSetupSettings } from './setup-settings.js';

const USAGE = `Usage: npm run compose:setup

Creates and migrates the seat database, gives its roles their passwords, creates the slot
monitor's and job watchdog's roles, and creates the consumer database owned by the consumers'
role. Safe to run again.`;

async function main(
  config: Config<typeof composeSetupSettings.settings>,
  _args: string[],
  logger: Logger,
): Promise<number> {
  const applied = await prepareRehearsalDatabases(
    {
      seatAdminUrl: config.seatAdminUrl,
      consumerAdminUrl: config.consumerAdminUrl,
      passwords: {
        service: config.servicePassword,
        debezium: config.debeziumPassword,
        slotMonitor: config.slotMonitorPassword,
        jobWatchdog: config.jobWatchdogPassword,
        consumer: config.consumerPassword,
      },
      applicationName: 'compose-setup',
    },
    logger,
  );
  logger.info({ applied }, 'seat and consumer databases ready');
  return 0;
}

startProgram({ settings: composeSetupSettings, usage: USAGE, main });
