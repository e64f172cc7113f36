/**
 * The role a consumer logs in as: the owner of its consumer database and of everything in it (the
 * inbox, the read models, the redrive records), so its migrations can create and change its own
 * tables. Nothing more: no superuser, no other database, no seat data; and no other role has CONNECT on it.
 */
import pg from 'pg';
import { type Queryable, ensureLoginRole } from '../../lib/postgres.js';

/**
 * Creates (or re-passwords) `role` and makes it the owner of the database `admin` is connected to
 * and of every table, view and sequence in its public schema (objects a superuser created before).
 * Idempotent: running it on every deploy is fine.
 */
export async function ensureConsumerRole(
  admin: Queryable,
  { role, password }: { role: string; password: string },
): Promise<void> {
  const name = pg.escapeIdentifier(role);
  await ensureLoginRole(admin, role, password);
  const database = (await admin.query(/* sql */ `select current_database() as name`)).rows[0] as { name: string };
  await admin.query(/* sql */ `alter database ${pg.escapeIdentifier(database.name)} owner to ${name}`);
  // The owner's alone: no other role (the seat database's Debezium role, say) may enter it.
  await admin.query(
    /* sql */ `revoke connect, temporary on database ${pg.escapeIdentifier(database.name)} from public`,
  );
  // Tables and views first: a table's own sequences (serial columns) follow it; then any left.
  for (const kinds of [['r', 'p', 'v'], ['S']]) {
    const others = await admin.query(
      /* sql */ `
      select c.relname, c.relkind
        from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'public' and c.relkind = any($2::"char"[]) and pg_catalog.pg_get_userbyid(c.relowner) <> $1`,
      [role, kinds],
    );
    for (const { relname, relkind } of others.rows as { relname: string; relkind: string }[]) {
      const kind = relkind === 'v' ? 'view' : relkind === 'S' ? 'sequence' : 'table';
      await admin.query(/* sql */ `alter ${kind} public.${pg.escapeIdentifier(relname)} owner to ${name}`);
    }
  }
}
