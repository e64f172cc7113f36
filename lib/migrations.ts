/**
 * Runs numbered plain SQL files (`000001_create_seats.sql`, `000002_…`) from a
 * folder, each in its own transaction together with the row that records it in
 * `<schema>.schema_migrations`, under an advisory lock so two runners never race.
 *
 * Each file runs with `search_path` set to the target schema only, so unqualified
 * names land there (tests isolate themselves with a schema per test file).
 * A file cannot contain statements that refuse to run in a transaction
 * (CREATE INDEX CONCURRENTLY, VACUUM …).
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import type { Pool, PoolClient } from 'pg';
import { PipelineError, errorMessage } from './errors.js';
import type { Logger } from './logger.js';

interface MigrationFile {
  version: number;
  name: string;
  fileName: string;
  path: string;
}

export interface RunMigrationsOptions {
  pool: Pool;
  folder: string;
  /** Where schema_migrations lives and what search_path is while files run. Created if missing. */
  schema?: string;
  logger?: Logger;
}

const MIGRATION_FILE = /^(\d+)_([A-Za-z0-9_-]+)\.sql$/;
/** First key of the two-key advisory lock, "SF"; the second is hashtext(schema). */
const ADVISORY_LOCK_CLASS = 0x5346;

/** The folder's migration files, ordered by number. Refuses misnamed files and shared numbers. */
async function readMigrationFiles(folder: string): Promise<MigrationFile[]> {
  const fileNames = (await readdir(folder)).filter((fileName) => fileName.endsWith('.sql')).sort();
  const byVersion = new Map<number, MigrationFile>();
  for (const fileName of fileNames) {
    const match = MIGRATION_FILE.exec(fileName);
    if (!match) {
      throw new PipelineError(
        'migration_file_misnamed',
        `Migration file ${fileName} in ${folder} is not named like 000001_create_seats.sql; rename it (number, underscore, name, .sql).`,
        { details: { folder, fileName } },
      );
    }
    const version = Number(match[1]);
    const other = byVersion.get(version);
    if (other) {
      throw new PipelineError(
        'migration_number_duplicated',
        `Migrations ${other.fileName} and ${fileName} in ${folder} share number ${version}; give one of them the next free number.`,
        { details: { folder, version, fileNames: [other.fileName, fileName] } },
      );
    }
    byVersion.set(version, { version, name: match[2] ?? '', fileName, path: join(folder, fileName) });
  }
  return [...byVersion.values()].sort((a, b) => a.version - b.version);
}

async function ensureMigrationsTable(client: PoolClient, schema: string): Promise<void> {
  const quoted = pg.escapeIdentifier(schema);
  const exists = await client.query(/* sql */ `SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema]);
  if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${quoted}`);
  await client.query(/* sql */ `
    CREATE TABLE IF NOT EXISTS ${quoted}.schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
}

async function recordedVersions(client: PoolClient, schema: string): Promise<Set<number>> {
  const result = await client.query<{ version: number }>(
    /* sql */ `SELECT version FROM ${pg.escapeIdentifier(schema)}.schema_migrations ORDER BY version`,
  );
  return new Set(result.rows.map((row) => row.version));
}

function assertRecordedFilesExist(recorded: Set<number>, files: MigrationFile[], folder: string, schema: string): void {
  const known = new Set(files.map((file) => file.version));
  const missing = [...recorded].filter((version) => !known.has(version));
  if (missing.length === 0) return;
  throw new PipelineError(
    'migration_file_missing',
    `Version${missing.length > 1 ? 's' : ''} ${missing.join(', ')} recorded in ${schema}.schema_migrations ` +
      `ha${missing.length > 1 ? 've' : 's'} no file in ${folder}; restore the file (an applied migration is never deleted or renumbered) or point at the right folder.`,
    { details: { folder, schema, missing } },
  );
}

function lineOf(sql: string, position: string | undefined): string {
  const offset = Number(position);
  if (!Number.isInteger(offset) || offset < 1) return '';
  return ` at line ${sql.slice(0, offset - 1).split('\n').length}`;
}

async function applyMigration(client: PoolClient, schema: string, migration: MigrationFile): Promise<void> {
  const sql = await readFile(migration.path, 'utf8');
  const quoted = pg.escapeIdentifier(schema);
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL search_path TO ${quoted}`);
    await client.query(sql);
    await client.query(/* sql */ `INSERT INTO ${quoted}.schema_migrations (version, name) VALUES ($1, $2)`, [
      migration.version,
      migration.name,
    ]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    const where = err instanceof pg.DatabaseError ? lineOf(sql, err.position) : '';
    throw new PipelineError(
      'migration_failed',
      `Migration ${migration.fileName} failed${where}: ${errorMessage(err)}; none of it was applied, fix the file and run again.`,
      { cause: err, details: { version: migration.version, fileName: migration.fileName, schema } },
    );
  }
}

/**
 * Applies every migration of `folder` not yet recorded in `<schema>.schema_migrations`,
 * in order, and returns the versions applied by this run ([] when up to date).
 */
export async function runMigrations(options: RunMigrationsOptions): Promise<number[]> {
  const { pool, folder, schema = 'public', logger } = options;
  const files = await readMigrationFiles(folder);
  const client = await pool.connect();
  try {
    await client.query(/* sql */ `SELECT pg_advisory_lock($1, hashtext($2))`, [ADVISORY_LOCK_CLASS, schema]);
    await ensureMigrationsTable(client, schema);
    const recorded = await recordedVersions(client, schema);
    assertRecordedFilesExist(recorded, files, folder, schema);
    const applied: number[] = [];
    for (const migration of files.filter((file) => !recorded.has(file.version))) {
      await applyMigration(client, schema, migration);
      logger?.info({ schema, version: migration.version, file: migration.fileName }, 'applied migration');
      applied.push(migration.version);
    }
    await client.query(/* sql */ `SELECT pg_advisory_unlock($1, hashtext($2))`, [ADVISORY_LOCK_CLASS, schema]);
    client.release();
    return applied;
  } catch (err) {
    client.release(true); // closing the session also frees the advisory lock
    throw err;
  }
}
