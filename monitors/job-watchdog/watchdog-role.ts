/**
 * The role the job watchdog logs in as: LOGIN and SELECT on job_runs and holds, nothing else
 * (no superuser, no writes, no other table). Run it connected to the seat database.
 */
import pg from 'pg';
import { type Queryable, ensureLoginRole } from '../../lib/postgres.js';

export type { Queryable };

export interface WatchdogRoleOptions {
  role: string;
  password: string;
  /** Schema of job_runs and holds (default public). */
  schema?: string;
}

/** The statements that give `role` exactly what the watchdog needs; each is safe to run again. */
function watchdogRoleGrants(role: string, schema = 'public'): string[] {
  const name = pg.escapeIdentifier(role);
  const tables = ['job_runs', 'holds']
    .map((table) => `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}`)
    .join(', ');
  return [
    /* sql */ `alter role ${name} with login nosuperuser nocreatedb nocreaterole noreplication nobypassrls`,
    /* sql */ `grant usage on schema ${pg.escapeIdentifier(schema)} to ${name}`,
    /* sql */ `grant select on ${tables} to ${name}`,
  ];
}

/**
 * Creates the watchdog role when it is missing, (re)sets its password and grants what
 * `watchdogRoleGrants` lists. Idempotent: running it on every deploy is fine.
 */
export async function ensureWatchdogRole(
  admin: Queryable,
  { role, password, schema }: WatchdogRoleOptions,
): Promise<void> {
  await ensureLoginRole(admin, role, password);
  for (const statement of watchdogRoleGrants(role, schema)) await admin.query(statement);
}
