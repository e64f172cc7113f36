import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runMigrations } from '../../../lib/migrations.js';
import { type Pool, assertReachable, createPool } from '../../../lib/postgres.js';
import { captureLogs } from './log-capture.js';
import { ADMIN_PG_URL, START_HINT, dropSchema, randomSchemaName, useTestPostgres } from './pg-test-schema.js';

useTestPostgres();
let pool: Pool;

let schema: string;
let folder: string;

beforeAll(async () => {
  await assertReachable(ADMIN_PG_URL, START_HINT);
  pool = createPool({
    connectionString: ADMIN_PG_URL,
    applicationName: 'lib-migrations-test',
    logger: captureLogs('silent').logger,
    max: 4,
  });
});
afterAll(async () => {
  await pool.end();
});
beforeEach(async () => {
  schema = randomSchemaName('lib_migrations');
  folder = await mkdtemp(join(tmpdir(), 'lib-migrations-'));
});
afterEach(async () => {
  await dropSchema(pool, schema);
  await rm(folder, { recursive: true, force: true });
});

async function writeMigration(fileName: string, sql: string): Promise<void> {
  await writeFile(join(folder, fileName), sql);
}

async function recorded(): Promise<{ version: number; name: string }[]> {
  const result = await pool.query<{ version: number; name: string }>(
    `SELECT version, name FROM ${pg.escapeIdentifier(schema)}.schema_migrations ORDER BY version`,
  );
  return result.rows;
}

async function tableExists(table: string): Promise<boolean> {
  const result = await pool.query<{ found: string | null }>('SELECT to_regclass($1) AS found', [
    `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}`,
  ]);
  return result.rows[0]?.found !== null;
}

const seatsMigrations: [string, string][] = [
  ['000001_create_seats.sql', 'CREATE TABLE seats (id int PRIMARY KEY);'],
  ['000002_add_label.sql', 'ALTER TABLE seats ADD COLUMN label text;\n'],
  ['000010_seed_seats.sql', "INSERT INTO seats (id, label) VALUES (1, 'A1'), (2, 'A2');"],
];

describe('runMigrations', () => {
  it('applies files in numeric order into the schema and records each version', async () => {
    for (const [fileName, sql] of [...seatsMigrations].reverse()) await writeMigration(fileName, sql);
    await writeMigration('README.md', 'not a migration');

    expect(await runMigrations({ pool, folder, schema })).toEqual([1, 2, 10]);

    expect(await recorded()).toEqual([
      { version: 1, name: 'create_seats' },
      { version: 2, name: 'add_label' },
      { version: 10, name: 'seed_seats' },
    ]);
    const seats = await pool.query(`SELECT id, label FROM ${pg.escapeIdentifier(schema)}.seats ORDER BY id`);
    expect(seats.rows).toEqual([
      { id: 1, label: 'A1' },
      { id: 2, label: 'A2' },
    ]);
  });

  it('is idempotent and applies only files added since the last run', async () => {
    for (const [fileName, sql] of seatsMigrations) await writeMigration(fileName, sql);
    await runMigrations({ pool, folder, schema });
    const before = await pool.query(`SELECT version, applied_at FROM ${pg.escapeIdentifier(schema)}.schema_migrations`);

    expect(await runMigrations({ pool, folder, schema })).toEqual([]);
    const after = await pool.query(`SELECT version, applied_at FROM ${pg.escapeIdentifier(schema)}.schema_migrations`);
    expect(after.rows).toEqual(before.rows);

    await writeMigration('000011_more_seats.sql', "INSERT INTO seats (id, label) VALUES (3, 'A3');");
    expect(await runMigrations({ pool, folder, schema })).toEqual([11]);
    const count = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${pg.escapeIdentifier(schema)}.seats`,
    );
    expect(count.rows[0]?.n).toBe(3);
  });

  it('records a version in the same transaction as its file: a failure leaves neither row nor partial table', async () => {
    await writeMigration('000001_create_seats.sql', 'CREATE TABLE seats (id int PRIMARY KEY);');
    await writeMigration(
      '000002_holds.sql',
      'CREATE TABLE holds (seat_id int);\nINSERT INTO holds VALUES (1);\nINSRT INTO holds VALUES (2);\n',
    );

    const failure = runMigrations({ pool, folder, schema });
    await expect(failure).rejects.toMatchObject({ code: 'migration_failed' });
    await expect(failure).rejects.toThrow(
      /^Migration 000002_holds\.sql failed at line 3: syntax error at or near "INSRT"/,
    );

    expect(await recorded()).toEqual([{ version: 1, name: 'create_seats' }]);
    expect(await tableExists('seats')).toBe(true);
    expect(await tableExists('holds')).toBe(false);

    await writeMigration('000002_holds.sql', 'CREATE TABLE holds (seat_id int);');
    expect(await runMigrations({ pool, folder, schema })).toEqual([2]);
  });

  it('refuses two files with the same number before touching the database', async () => {
    await writeMigration('000001_create_seats.sql', 'CREATE TABLE seats (id int);');
    await writeMigration('000001_create_orders.sql', 'CREATE TABLE orders (id int);');

    const run = runMigrations({ pool, folder, schema });
    await expect(run).rejects.toMatchObject({ code: 'migration_number_duplicated' });
    await expect(run).rejects.toThrow('000001_create_orders.sql and 000001_create_seats.sql');
    const schemas = await pool.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    expect(schemas.rowCount).toBe(0);
  });

  it('refuses a recorded version whose file is missing', async () => {
    for (const [fileName, sql] of seatsMigrations) await writeMigration(fileName, sql);
    await runMigrations({ pool, folder, schema });
    await unlink(join(folder, '000002_add_label.sql'));

    await expect(runMigrations({ pool, folder, schema })).rejects.toMatchObject({
      code: 'migration_file_missing',
      message: expect.stringContaining(`Version 2 recorded in ${schema}.schema_migrations has no file in ${folder}`),
    });
  });

  it('refuses a .sql file that is not numbered', async () => {
    await writeMigration('create_seats.sql', 'CREATE TABLE seats (id int);');
    await expect(runMigrations({ pool, folder, schema })).rejects.toMatchObject({ code: 'migration_file_misnamed' });
  });

  it('lets only one of two concurrent runners apply each file', async () => {
    for (const [fileName, sql] of seatsMigrations) await writeMigration(fileName, sql);

    const runs = await Promise.all([runMigrations({ pool, folder, schema }), runMigrations({ pool, folder, schema })]);

    expect(runs.flat().sort((a, b) => a - b)).toEqual([1, 2, 10]);
    expect(runs.some((applied) => applied.length === 0)).toBe(true);
  });

  it('escapes the schema name instead of pasting it', async () => {
    schema = `${randomSchemaName('Lib Migrations')} "quoted"; --`;
    await writeMigration('000001_create_seats.sql', 'CREATE TABLE seats (id int PRIMARY KEY);');
    const { logger, lines } = captureLogs('info');

    expect(await runMigrations({ pool, folder, schema, logger })).toEqual([1]);
    expect(await tableExists('seats')).toBe(true);
    expect(lines[0]).toMatchObject({ msg: 'applied migration', schema, version: 1 });
  });
});
