/**
 * Postgres plumbing: a pool that logs instead of crashing, transactions that
 * retry on serialization failures and deadlocks, and a fail-fast reachability check.
 */
import pg from 'pg';
import type { Pool, PoolClient } from 'pg';
import { PipelineError, causeChain, errorMessage, isRetryablePgError, sqlState } from './errors.js';
import type { Logger } from './logger.js';
import { retryDelay, sleep } from './wait.js';

export type { Pool, PoolClient };

export interface CreatePoolOptions {
  connectionString: string;
  /** Shown in pg_stat_activity.application_name: "seat-service", "email-consumer". */
  applicationName: string;
  logger: Logger;
  max?: number;
  connectionTimeoutMs?: number;
  idleTimeoutMs?: number;
  /**
   * How long one statement may go unanswered before it fails (node-postgres's client-side
   * `query_timeout`; the failure code is `postgres_unanswered`): a connection that stopped
   * answering (half-open after a failover, a cut network) fails its caller instead of holding it
   * for good. A transaction whose ROLLBACK gets no answer either gives its connection up. Default:
   * none (migrations and reports may take long).
   */
  queryTimeoutMs?: number;
}

/** A pg Pool whose idle-client errors (server restart, network cut) are logged rather than crashing the process. */
export function createPool(options: CreatePoolOptions): Pool {
  const { connectionString, applicationName, logger, max = 10 } = options;
  const pool = new pg.Pool({
    connectionString,
    application_name: applicationName,
    max,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
    idleTimeoutMillis: options.idleTimeoutMs ?? 30_000,
    // A peer that vanished without a FIN (a crashed host, a cut network) is noticed by the kernel.
    keepAlive: true,
    ...(options.queryTimeoutMs === undefined ? {} : { query_timeout: options.queryTimeoutMs }),
  });
  pool.on('error', (err) => {
    logger.error(
      { err, applicationName },
      'an idle Postgres connection failed; the pool drops it and opens a new one when needed',
    );
  });
  return pool;
}

type Isolation = 'read committed' | 'repeatable read' | 'serializable';

const BEGIN_STATEMENTS: Readonly<Record<Isolation, string>> = {
  'read committed': 'BEGIN ISOLATION LEVEL READ COMMITTED',
  'repeatable read': 'BEGIN ISOLATION LEVEL REPEATABLE READ',
  serializable: 'BEGIN ISOLATION LEVEL SERIALIZABLE',
};

export interface TransactionOptions {
  isolation?: Isolation;
  /** Extra attempts after a retryable failure (serialization failure, deadlock, lost connection). Default 3. */
  retries?: number;
  logger?: Logger;
  /** Backoff between attempts: full jitter, base 20 ms, cap 500 ms unless told otherwise. */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

async function commit(client: PoolClient): Promise<void> {
  try {
    await client.query('COMMIT');
  } catch (err) {
    // A server answer (e.g. 40001 at commit) means it rolled back: safe to retry.
    // A lost connection means nobody knows whether it committed: never retry blindly.
    if (sqlState(err) !== undefined) throw err;
    throw new PipelineError(
      'commit_outcome_unknown',
      `The connection failed during COMMIT (${errorMessage(err)}), so whether the transaction committed is unknown; it was not retried.`,
      { cause: err },
    );
  }
}

async function runOnce<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>, isolation: Isolation): Promise<T> {
  const client = await pool.connect();
  let destroy = false;
  // A connection the server ends between two statements (a failover, a terminated backend) emits
  // 'error' on the checked-out client, which the pool does not listen to then: without a listener
  // that crashes the process. The next statement fails with it and the transaction handles that.
  const onError = (): void => {
    destroy = true;
  };
  client.on('error', onError);
  try {
    await client.query(BEGIN_STATEMENTS[isolation]);
    const result = await fn(client);
    await commit(client);
    return result;
  } catch (err) {
    try {
      await client.query('ROLLBACK');
    } catch {
      destroy = true; // the connection is unusable: do not hand it back to the pool
    }
    throw err;
  } finally {
    client.off('error', onError);
    client.release(destroy);
  }
}

function isRetryableTransactionError(err: unknown): boolean {
  if (err instanceof PipelineError && err.code === 'commit_outcome_unknown') return false;
  return causeChain(err).some(isRetryablePgError);
}

/**
 * BEGIN, `fn(client)`, COMMIT; ROLLBACK and rethrow on error. On a retryable
 * Postgres error the whole transaction runs again (so `fn` must do nothing
 * outside the database), after a short jittered backoff, up to `retries` times.
 */
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const { isolation = 'read committed', retries = 3, logger, baseDelayMs = 20, maxDelayMs = 500 } = options;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await runOnce(pool, fn, isolation);
    } catch (err) {
      if (attempt >= retries || !isRetryableTransactionError(err)) throw err;
      const delayMs = retryDelay({ attempt, baseMs: baseDelayMs, capMs: maxDelayMs });
      logger?.warn(
        { err, sqlstate: sqlState(err), attempt: attempt + 1, retries, delayMs },
        'transaction failed with a retryable error; running it again',
      );
      await sleep(delayMs);
    }
  }
}

/** The connection string with any password replaced by "***", for messages and logs. */
export function redactConnectionString(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return connectionString.replace(/(password\s*=\s*)\S+/gi, '$1***');
  }
}

function describeConnectFailure(err: unknown): string {
  const message = errorMessage(err);
  const code = (err as { code?: unknown } | null)?.code;
  if (message !== '' && typeof code === 'string' && !message.includes(code)) return `${message}, ${code}`;
  return message !== '' ? message : typeof code === 'string' ? code : 'unknown error';
}

/**
 * Connects once and runs `select 1`; throws a PipelineError ('postgres_unreachable')
 * whose message names the database and the command that starts the stack (`startHint`).
 */
export async function assertReachable(
  connectionString: string,
  startHint: string,
  options: { timeoutMs?: number } = {},
): Promise<void> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: options.timeoutMs ?? 3_000 });
  client.on('error', () => undefined); // reported through connect()/query() below
  let connected = false;
  try {
    await client.connect();
    connected = true;
    await client.query('select 1');
  } catch (err) {
    const where = redactConnectionString(connectionString);
    const answered = sqlState(err) !== undefined;
    const message = answered
      ? `Postgres at ${where} refused the connection (${describeConnectFailure(err)}); check the connection string, or start the stack with: ${startHint}`
      : `Postgres at ${where} is not reachable (${describeConnectFailure(err)}); start the stack with: ${startHint}`;
    throw new PipelineError('postgres_unreachable', message, { cause: err });
  } finally {
    if (connected) await client.end().catch(() => undefined);
  }
}

/**
 * Creates database `name` on the server of `adminUrl` when it is missing (connects to that URL's
 * database, usually `postgres`). Returns true when it created it.
 */
export async function ensureDatabase(adminUrl: string, name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount !== 0) return false;
    await client.query(`create database ${client.escapeIdentifier(name)}`);
    return true;
  } finally {
    await client.end();
  }
}

/** Something that runs SQL: a pg Client, PoolClient or Pool. */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<pg.QueryResult>;
}

/**
 * Creates the login role `role` when it is missing, or (re)sets its password; never a superuser.
 * Run as a superuser (or a role with CREATEROLE). Idempotent: running it on every deploy is fine.
 */
export async function ensureLoginRole(admin: Queryable, role: string, password: string): Promise<void> {
  const existing = await admin.query(/* sql */ `select 1 from pg_catalog.pg_roles where rolname = $1`, [role]);
  const verb = existing.rowCount === 0 ? 'create' : 'alter';
  await admin.query(
    /* sql */ `${verb} role ${pg.escapeIdentifier(role)} login nosuperuser password ${pg.escapeLiteral(password)}`,
  );
}
