/**
 * The role the slot monitor logs in as: pg_monitor to read slots and statistics, the right to
 * ALTER SYSTEM one parameter (max_slot_wal_keep_size) and to reload the configuration. Nothing more:
 * no superuser, no replication, no table privileges.
 */
import pg from 'pg';
import { type Queryable, ensureLoginRole } from '../../lib/postgres.js';

export interface MonitorRoleOptions {
  role: string;
  password: string;
}

export type { Queryable };

/** The statements that give `role` exactly what the monitor needs; each is safe to run again. */
function monitorRoleGrants(role: string): string[] {
  const name = pg.escapeIdentifier(role);
  return [
    /* sql */ `alter role ${name} with login nosuperuser nocreatedb nocreaterole noreplication nobypassrls`,
    /* sql */ `grant pg_monitor to ${name}`,
    /* sql */ `grant alter system on parameter max_slot_wal_keep_size to ${name}`,
    /* sql */ `grant execute on function pg_catalog.pg_reload_conf() to ${name}`,
  ];
}

/**
 * Creates the monitor role when it is missing, (re)sets its password, and grants what
 * `monitorRoleGrants` lists. Idempotent: running it on every deploy is fine.
 * Run it connected to the seat database: the role and the ALTER SYSTEM grant are cluster-wide,
 * but EXECUTE on pg_reload_conf() is granted in the database the statement runs in.
 */
export async function ensureMonitorRole(admin: Queryable, { role, password }: MonitorRoleOptions): Promise<void> {
  await ensureLoginRole(admin, role, password);
  for (const statement of monitorRoleGrants(role)) await admin.query(statement);
}
