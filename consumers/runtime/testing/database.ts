/**
 * Postgres for a consumer's tests: a fresh database per test (its migrations applied) on a server
 * for the whole file. The server is `TEST_POSTGRES_URL` when set (an admin URL: the stack's
 * Postgres, postgres://postgres:postgres@127.0.0.1:54329/postgres, or any other), otherwise a
 * throwaway cluster of the machine's Postgres binaries (stack/throwaway-postgres.ts) on a free
 * port, removed when the file is done. Nothing of the stack has to run.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startThrowawayPostgres } from '../../../stack/throwaway-postgres.js';
import { createLogger } from '../../../lib/logger.js';
import { type Pool, createPool } from '../../../lib/postgres.js';
import { migrateConsumerDatabase } from '../migrations.js';
import type { ConsumerDefinition } from '../types.js';

/** The setting that points the tests at a running Postgres instead of a throwaway one. */
export const TEST_POSTGRES_URL_ENV = 'TEST_POSTGRES_URL';

export interface TestDatabase {
  url: string;
  pool: Pool;
  /** Ends the pool and drops the database. */
  close(): Promise<void>;
}

export interface TestPostgres {
  adminUrl: string;
  /** `throwaway`: started for this file; `given`: TEST_POSTGRES_URL. */
  kind: 'throwaway' | 'given';
  /** A new database; with a definition, the runtime's migrations and the consumer's own applied. */
  createDatabase(definition?: ConsumerDefinition): Promise<TestDatabase>;
  /** Drops the template databases; stops a throwaway server (a given one is left running). */
  stop(): Promise<void>;
}

async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

function newName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/** The server for this test file (see the file's header). */
export async function startTestPostgres(env: NodeJS.ProcessEnv = process.env): Promise<TestPostgres> {
  const given = env[TEST_POSTGRES_URL_ENV];
  const server =
    given !== undefined && given !== ''
      ? { adminUrl: given, kind: 'given' as const, stop: () => Promise.resolve() }
      : { ...(await startThrowawayPostgres()), kind: 'throwaway' as const };
  const logger = createLogger({ name: 'test-postgres', level: 'silent' });
  const open = (name: string) =>
    createPool({
      connectionString: databaseUrl(server.adminUrl, name),
      applicationName: 'consumer-test-kit',
      logger,
      max: 4,
    });
  const drop = (name: string) =>
    adminQuery(server.adminUrl, `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  // Migrated once per set of migrations, then copied (CREATE DATABASE … TEMPLATE): a test's database costs one statement.
  const templates = new Map<string, Promise<string>>();
  const templateFor = (definition: ConsumerDefinition): Promise<string> => {
    const key = `${definition.migrations?.folder ?? ''}\u0000${definition.migrations?.schema ?? ''}`;
    let template = templates.get(key);
    if (template === undefined) {
      template = (async () => {
        const name = newName('kit_template');
        await adminQuery(server.adminUrl, `CREATE DATABASE ${pg.escapeIdentifier(name)}`);
        const pool = open(name);
        try {
          await migrateConsumerDatabase(pool, definition);
        } finally {
          await pool.end();
        }
        return name;
      })();
      templates.set(key, template);
    }
    return template;
  };
  return {
    adminUrl: server.adminUrl,
    kind: server.kind,
    async stop() {
      const made = await Promise.allSettled(templates.values());
      templates.clear();
      for (const result of made) if (result.status === 'fulfilled') await drop(result.value).catch(() => undefined);
      await server.stop();
    },
    async createDatabase(definition) {
      const template = definition === undefined ? undefined : await templateFor(definition);
      const name = newName('kit');
      const from = template === undefined ? '' : ` TEMPLATE ${pg.escapeIdentifier(template)}`;
      await adminQuery(server.adminUrl, `CREATE DATABASE ${pg.escapeIdentifier(name)}${from}`);
      const pool = open(name);
      return {
        url: databaseUrl(server.adminUrl, name),
        pool,
        close: async () => {
          await pool.end();
          await drop(name);
        },
      };
    },
  };
}
