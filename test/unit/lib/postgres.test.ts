import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PipelineError, causeChain, isRetryablePgError } from '../../../lib/errors.js';
import {
  type Pool,
  assertReachable,
  createPool,
  redactConnectionString,
  withTransaction,
} from '../../../lib/postgres.js';
import type { PoolClient } from '../../../lib/postgres.js';
import { waitFor } from '../../../lib/wait.js';
import { captureLogs } from './log-capture.js';
import { ADMIN_PG_URL, START_HINT, dropSchema, randomSchemaName, useTestPostgres } from './pg-test-schema.js';

const logs = captureLogs('info');
useTestPostgres();
let pool: Pool;
let schema: string;
let q: string;

beforeAll(async () => {
  await assertReachable(ADMIN_PG_URL, START_HINT);
  pool = createPool({
    connectionString: ADMIN_PG_URL,
    applicationName: 'lib-postgres-test',
    logger: logs.logger,
    max: 4,
  });
});
afterAll(async () => {
  await pool.end();
});
beforeEach(async () => {
  schema = randomSchemaName('lib_postgres');
  q = pg.escapeIdentifier(schema);
  await pool.query(`CREATE SCHEMA ${q}`);
  await pool.query(
    `CREATE TABLE ${q}.counter (id int PRIMARY KEY, n int NOT NULL); INSERT INTO ${q}.counter VALUES (1, 0)`,
  );
  logs.lines.length = 0;
});
afterEach(async () => {
  await dropSchema(pool, schema);
});

async function counterValue(): Promise<number | undefined> {
  const result = await pool.query<{ n: number }>(`SELECT n FROM ${q}.counter WHERE id = 1`);
  return result.rows[0]?.n;
}

/** Two increments that both read before either writes: the second writer hits a real 40001. */
function racingIncrements(retries: number): {
  attempts: () => number;
  run: () => Promise<PromiseSettledResult<number>[]>;
} {
  let attempts = 0;
  let arrived = 0;
  let releaseBarrier: () => void = () => undefined;
  const barrier = new Promise<void>((resolve) => (releaseBarrier = resolve));
  const increment = async (client: PoolClient): Promise<number> => {
    attempts += 1;
    const read = await client.query<{ n: number }>(`SELECT n FROM ${q}.counter WHERE id = 1`);
    arrived += 1;
    if (arrived === 2) releaseBarrier();
    await barrier;
    await client.query(`UPDATE ${q}.counter SET n = $1 WHERE id = 1`, [(read.rows[0]?.n ?? 0) + 1]);
    return attempts;
  };
  const options = { isolation: 'serializable' as const, retries, logger: logs.logger, baseDelayMs: 1, maxDelayMs: 5 };
  return {
    attempts: () => attempts,
    run: () =>
      Promise.allSettled([withTransaction(pool, increment, options), withTransaction(pool, increment, options)]),
  };
}

describe('withTransaction', () => {
  it('commits what fn wrote and returns its result', async () => {
    const result = await withTransaction(pool, async (client) => {
      await client.query(`UPDATE ${q}.counter SET n = 5 WHERE id = 1`);
      return 'done';
    });
    expect(result).toBe('done');
    expect(await counterValue()).toBe(5);
  });

  it('rolls back and rethrows the same error without retrying a non-retryable failure', async () => {
    let attempts = 0;
    const failure = new PipelineError('data_error', 'the effect failed');
    await expect(
      withTransaction(pool, async (client) => {
        attempts += 1;
        await client.query(`UPDATE ${q}.counter SET n = 7 WHERE id = 1`);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(attempts).toBe(1);
    expect(await counterValue()).toBe(0);
  });

  it('runs the transaction again after a real serialization failure, so no increment is lost', async () => {
    const race = racingIncrements(3);
    const results = await race.run();

    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(race.attempts()).toBe(3);
    expect(await counterValue()).toBe(2);
    expect(logs.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        sqlstate: '40001',
        attempt: 1,
        msg: expect.stringContaining('retryable'),
      }),
    );
  });

  it('gives up after `retries` and throws the Postgres error', async () => {
    const results = await racingIncrements(0).run();

    const rejected = results.filter((result) => result.status === 'rejected');
    expect(rejected).toHaveLength(1);
    const reason: unknown = rejected[0]?.reason;
    expect(reason).toBeInstanceOf(pg.DatabaseError);
    expect(reason).toMatchObject({ code: '40001' });
    expect(causeChain(reason).some(isRetryablePgError)).toBe(true);
    expect(await counterValue()).toBe(1);
  });
});

describe('withTransaction, when the server ends the connection between two statements', () => {
  it('rejects with the lost connection, never an uncaught error, and hands no broken client back', async () => {
    const killer = createPool({
      connectionString: ADMIN_PG_URL,
      applicationName: 'lib-postgres-test-killer',
      logger: logs.logger,
      max: 1,
    });
    const outcome = withTransaction(
      pool,
      async (client: PoolClient) => {
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await killer.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
        // Idle between statements, as a handler is while it computes: the server's FATAL arrives now.
        await waitFor(
          async () =>
            (await killer.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [rows[0]!.pid])).rowCount === 0,
          { timeoutMs: 5_000, description: 'the backend gone' },
        );
        await client.query('SELECT 1');
      },
      { retries: 0 },
    );
    await expect(outcome).rejects.toSatisfy((err: unknown) => causeChain(err).some(isRetryablePgError));
    expect(await counterValue()).toBe(0);
    await killer.end();
  });
});

describe('createPool', () => {
  it('logs an idle connection killed by the server instead of crashing', async () => {
    const client = await pool.connect();
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    client.release();

    const killer = new pg.Client({ connectionString: ADMIN_PG_URL });
    await killer.connect();
    try {
      await killer.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await killer.end();
    }

    await waitFor(
      () => logs.lines.find((line) => line.level === 'error' && line.applicationName === 'lib-postgres-test'),
      {
        timeoutMs: 5_000,
        intervalMs: 20,
        description: 'the pool to log the terminated idle connection',
      },
    );
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one).toBe(1);
  });
});

describe('assertReachable', () => {
  it('passes against the running database and leaves no connection behind', async () => {
    const applicationName = randomSchemaName('assert_reachable');
    await assertReachable(`${ADMIN_PG_URL}?application_name=${applicationName}`, START_HINT);
    await waitFor(
      async () =>
        (
          await pool.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
            [applicationName],
          )
        ).rows[0]?.n === 0,
      { timeoutMs: 5_000, description: `the ${applicationName} connection to be closed` },
    );
  });

  it('fails fast with the command that starts the stack, and without the password', async () => {
    const unreachable = 'postgres://postgres:s3cret@127.0.0.1:1/postgres';
    const failure = assertReachable(unreachable, 'npm run stack -- start');

    await expect(failure).rejects.toMatchObject({ code: 'postgres_unreachable' });
    await expect(failure).rejects.toThrow(
      /^Postgres at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/postgres is not reachable \(.*ECONNREFUSED.*\); start the stack with: npm run stack -- start$/,
    );
  });

  it('says the server answered when it refuses the connection', async () => {
    const wrongDatabase = `${ADMIN_PG_URL.replace(/\/[^/]*$/, '')}/no_such_database_${Date.now()}`;
    await expect(assertReachable(wrongDatabase, 'npm run stack -- start')).rejects.toThrow(
      /refused the connection \(database "no_such_database_\d+" does not exist, 3D000\); check the connection string/,
    );
  });

  it('redacts passwords in URLs and key=value strings', () => {
    expect(redactConnectionString('postgres://u:pw@h:5432/db')).toBe('postgres://u:***@h:5432/db');
    expect(redactConnectionString('host=h password=pw dbname=db')).toBe('host=h password=*** dbname=db');
  });
});
