/** Settings of `npm run compose:setup`, the one-shot setup service of docker-compose.yml. */
import { defineSettings, zString, zUrl } from '../lib/settings.js';

/** The roles the compose services log in as (the same names as the native rehearsal's). */
/** The roles compose's programs log in as: the rehearsal's. */
export { REHEARSAL_ROLES as COMPOSE_ROLES } from '../rehearsal/databases.js';

const pgUrl = (example: string) => zUrl({ protocols: ['postgres', 'postgresql'], example });
const password = (example: string) => zString({ minLength: 1, example });

export const composeSetupSettings = defineSettings('compose-setup', {
  seatAdminUrl: {
    env: 'SEAT_DB_ADMIN_URL',
    default: undefined,
    parser: pgUrl('postgres://postgres:secret@postgres:5432/stagefront'),
    description: 'Seat database as its owner: created if missing, migrated, and its roles given their passwords.',
    secret: true,
  },
  consumerAdminUrl: {
    env: 'CONSUMER_DB_ADMIN_URL',
    default: undefined,
    parser: pgUrl('postgres://postgres:secret@postgres:5432/stagefront_consumers'),
    description: "Consumer database as a superuser: created if missing and handed to the consumers' own role.",
    secret: true,
  },
  servicePassword: {
    env: 'SEAT_SERVICE_DB_PASSWORD',
    default: undefined,
    parser: password('change-me'),
    description: 'Password given to the stagefront_service role (the seat service and hold sweeper).',
    secret: true,
  },
  debeziumPassword: {
    env: 'DEBEZIUM_DB_PASSWORD',
    default: undefined,
    parser: password('change-me'),
    description:
      'Password given to the stagefront_debezium role; the Connect worker must have the same value in its environment.',
    secret: true,
  },
  consumerPassword: {
    env: 'CONSUMER_DB_PASSWORD',
    default: undefined,
    parser: password('change-me'),
    description: 'Password given to the stagefront_consumer role, the owner of the consumer database.',
    secret: true,
  },
  slotMonitorPassword: {
    env: 'SLOT_MONITOR_DB_PASSWORD',
    default: undefined,
    parser: password('change-me'),
    description: 'Password given to the slot_monitor role (pg_monitor plus ALTER SYSTEM on max_slot_wal_keep_size).',
    secret: true,
  },
  jobWatchdogPassword: {
    env: 'JOB_WATCHDOG_DB_PASSWORD',
    default: undefined,
    parser: password('change-me'),
    description: 'Password given to the job_watchdog role (SELECT on job_runs and holds).',
    secret: true,
  },
});
