/**
 * What an error is, in one table: every code the project throws (a closed set, each with its
 * meaning and whether it clears by itself), the Postgres SQLSTATEs read in one place (which are
 * retryable, which are about the values a statement carried), and the network and kafkajs errors
 * that mean "away for now". The consumer runtime's failure rules (consumers/runtime/failures.ts)
 * and withTransaction's retries (lib/postgres.ts) are built on it; docs/operations.md prints it.
 */

interface ErrorCodeEntry {
  /** True when the same operation can succeed later without anybody changing anything. */
  readonly transient: boolean;
  /** What happened, for the docs: one sentence. */
  readonly meaning: string;
}

/**
 * Every code a PipelineError carries. Codes of records dead-lettered as poison are the dead letter
 * reasons with underscores (consumers/runtime/failures.ts). Add a row here to throw a new code.
 */
export const ERROR_CODES = {
  bad_argument: { transient: false, meaning: 'A command-line flag is missing or malformed.' },
  claim_open: {
    transient: true,
    meaning: 'Another delivery holds the inbox claim of this event and may still be sending it.',
  },
  commit_outcome_unknown: {
    transient: false,
    meaning: 'The connection failed during COMMIT: whether the transaction committed is unknown, so it is not retried.',
  },
  connect_request_failed: { transient: false, meaning: 'Kafka Connect answered a REST request with an error status.' },
  connect_unauthorized: {
    transient: false,
    meaning: 'Kafka Connect refused the credentials (or only half of them are set).',
  },
  connect_unreachable: { transient: true, meaning: 'No Kafka Connect worker answers.' },
  connector_config_refused: { transient: false, meaning: "Kafka Connect refused the connector's configuration." },
  connector_failed: { transient: false, meaning: 'The connector or one of its tasks is FAILED.' },
  connector_missing: { transient: false, meaning: 'Kafka Connect has no connector of that name.' },
  connector_not_signalling: {
    transient: false,
    meaning: 'The connector has no slot name or no signal table, so the slot recovery cannot signal it.',
  },
  consumer_migrations_schema_invalid: {
    transient: false,
    meaning: 'A consumer names a migrations schema that is not its own (public, or not a plain identifier).',
  },
  consumer_reset_unsupported: {
    transient: false,
    meaning:
      'The reset command refuses a consumer: its read model is not in a schema of its own, its effects leave the database, or an instance joined its group meanwhile.',
  },
  crashed_the_consumer: {
    transient: false,
    meaning: 'Poison: the record was in flight in every one of the delivery limit crashes of the consumer.',
  },
  data_error: {
    transient: false,
    meaning: "Poison: the handler cannot apply the record's values (its own PoisonError, or SQLSTATE class 22 or 23).",
  },
  deadline_exceeded: {
    transient: false,
    meaning: "Dead-lettered: the event was held past its type's deadline, and its policy is to dead-letter it.",
  },
  http_listen_failed: {
    transient: false,
    meaning: 'The metrics, health and readiness server cannot listen on its port.',
  },
  invalid_payload: { transient: false, meaning: "Poison: the decoded payload fails the event type's schema." },
  migration_failed: { transient: false, meaning: 'A migration file failed; none of it was applied.' },
  migration_file_misnamed: { transient: false, meaning: 'A migration file is not named like 000001_name.sql.' },
  migration_file_missing: {
    transient: false,
    meaning: 'A version recorded in schema_migrations has no migration file (an older build on a newer database).',
  },
  migration_number_duplicated: { transient: false, meaning: 'Two migration files share a number.' },
  no_standby: { transient: false, meaning: 'A failover was asked for on a stack that has no standby.' },
  not_a_cloudevent: { transient: false, meaning: 'Poison: the record lacks the CloudEvents headers.' },
  not_promoted: { transient: false, meaning: 'The database named as the new primary is still a standby in recovery.' },
  postgres_unanswered: {
    transient: true,
    meaning:
      'A statement to Postgres got no answer within the query timeout (a connection that stopped answering: a failover, a cut network); the connection is dropped and a new one opened.',
  },
  postgres_unreachable: { transient: true, meaning: 'Postgres does not answer (or refused the connection) at start.' },
  primary_still_running: {
    transient: false,
    meaning: 'A failover was asked for while the primary still answers: promoting would make two primaries.',
  },
  provider_unavailable: {
    transient: true,
    meaning: "A handler's external provider (an HTTP API) answered 5xx or timed out.",
  },
  publication_missing: {
    transient: false,
    meaning: 'The publication of the outbox table is missing on the new primary.',
  },
  schema_incompatible: {
    transient: false,
    meaning: "A schema is not compatible with the subject's registered versions; the producer refuses to start.",
  },
  schema_registry_error: { transient: false, meaning: 'The schema registry answered a request with an error status.' },
  schema_registry_unavailable: {
    transient: true,
    meaning:
      'The schema registry does not answer (not at all, or not within the request timeout), or does not hold the schemas it should (the message says which).',
  },
  slot_lost: { transient: false, meaning: 'The replication slot is lost: the slot recovery must run.' },
  slot_not_dropped: { transient: false, meaning: 'The connector is gone but its replication slot is still there.' },
  slot_not_on_new_primary: {
    transient: false,
    meaning: 'After a promotion the replication slot is not on the new primary (or cannot be used there).',
  },
  smtp_throttled: {
    transient: true,
    meaning:
      'The SMTP provider asked to slow down (421 or 451), or a send would wait too long for the pace its earlier answers set: the email waits and the pace is lowered.',
  },
  smtp_unavailable: { transient: true, meaning: 'The SMTP server did not take the message (or refused to encrypt).' },
  standby_down: { transient: false, meaning: 'A failover was asked for, but the standby does not answer.' },
  topic_missing: {
    transient: true,
    meaning:
      "A consumer's topic does not exist: applying the outbox connector (npm run connector -- apply) creates the event topics.",
  },

  undecodable: {
    transient: false,
    meaning: 'Poison: the value is not Avro in the registry wire format, or fails to decode.',
  },
  unknown_schema: { transient: false, meaning: "Poison: the record's schema id is not one the registry holds." },
} as const satisfies Record<string, ErrorCodeEntry>;

/** The closed set of error codes. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes that clear by themselves: the only ones a TransientError may carry. */
export type TransientErrorCode = {
  [Code in ErrorCode]: (typeof ERROR_CODES)[Code]['transient'] extends true ? Code : never;
}[ErrorCode];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

export interface PipelineErrorOptions {
  cause?: unknown;
  details?: Record<string, unknown>;
}

/** An error of ours: a code from ERROR_CODES to alert and count on, and the cause. */
export class PipelineError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: PipelineErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'PipelineError';
    this.code = code;
    this.details = options.details ?? {};
  }
}

/** The table as Markdown rows, for docs/operations.md (`npm run docs:settings` writes it; a unit test compares). */
export function errorCodesMarkdown(): string {
  const rows = Object.entries(ERROR_CODES).map(
    ([code, entry]: [string, ErrorCodeEntry]) =>
      `| \`${code}\` | ${entry.transient ? 'yes' : 'no'} | ${entry.meaning.replaceAll('|', '\\|')} |`,
  );
  return ['| Code | Clears by itself | Meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

/**
 * The SQLSTATE of a Postgres error as node-postgres builds it (a five-character code and a
 * severity), or undefined: the one place a Postgres error code is read. A socket error's code
 * (EPIPE, ECONNRESET) has no severity and is not a SQLSTATE. Does not walk causes.
 */
export function sqlState(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, severity } = err as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof severity === 'string' ? code : undefined;
}

/**
 * SQLSTATE classes that are about the values a statement carried, not about the database:
 * 22 data_exception (a value out of range, bad text), 23 integrity_constraint_violation.
 * Every other class (08 connection, 25006 read-only, 28 login, 42501 permission, 53 resources,
 * 57014 statement timeout, 40 serialization, XX internal) is the infrastructure's.
 */
const DATA_ERROR_SQLSTATE_CLASSES: ReadonlySet<string> = new Set(['22', '23']);

/** True when the error itself (not its causes) is a Postgres error about the statement's values. */
export function isPostgresDataError(err: unknown): boolean {
  const state = sqlState(err);
  return state !== undefined && DATA_ERROR_SQLSTATE_CLASSES.has(state.slice(0, 2));
}

/**
 * Postgres SQLSTATEs worth retrying, keyed by full code (5 characters) or by
 * class (2 characters, the whole class is retryable).
 * https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
const RETRYABLE_PG_CODES: Readonly<Record<string, string>> = {
  '08': 'connection_exception (whole class: the connection broke or never opened)',
  '40001': 'serialization_failure',
  '40P01': 'deadlock_detected',
  '53300': 'too_many_connections',
  '55P03': 'lock_not_available',
  '57P01': 'admin_shutdown',
  '57P02': 'crash_shutdown',
  '57P03': 'cannot_connect_now (server starting up or in recovery)',
};

/** Node socket errors that mean "the network or the server is away for now". */
const RETRYABLE_NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** Messages node-postgres uses for a lost or never-established connection (no SQLSTATE). */
const PG_CONNECTION_LOST_MESSAGES: readonly RegExp[] = [
  /^Connection terminated/,
  /timeout exceeded when trying to connect/,
  /Client has encountered a connection error and is not queryable/,
];

/** kafkajs error names that are transient even when `retriable` is false. */
const RETRYABLE_KAFKA_ERROR_NAMES: ReadonlySet<string> = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSNoBrokerAvailableError',
]);

function stringProperty(value: unknown, key: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const property: unknown = (value as Record<string, unknown>)[key];
  return typeof property === 'string' ? property : undefined;
}

function isRetryablePgCode(code: string): boolean {
  return code in RETRYABLE_PG_CODES || code.slice(0, 2) in RETRYABLE_PG_CODES;
}

/**
 * node-postgres's client-side query timeout (`query_timeout`, CreatePoolOptions.queryTimeoutMs): a
 * plain Error with this message and no code, so it is recognised here, in one place.
 */
const PG_QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/** True for node-postgres's query timeout: the statement got no answer in time. Does not walk causes. */
export function isUnansweredQuery(err: unknown): boolean {
  return err instanceof Error && err.message === PG_QUERY_TIMEOUT_MESSAGE && stringProperty(err, 'code') === undefined;
}

/** True for a retryable SQLSTATE, a network error, or a pg "connection lost" error. Does not walk causes. */
export function isRetryablePgError(err: unknown): boolean {
  const state = sqlState(err);
  if (state !== undefined && isRetryablePgCode(state)) return true;
  const code = stringProperty(err, 'code');
  if (code !== undefined && RETRYABLE_NETWORK_CODES.has(code)) return true;
  const message = stringProperty(err, 'message');
  return message !== undefined && PG_CONNECTION_LOST_MESSAGES.some((pattern) => pattern.test(message));
}

/** True for kafkajs errors marked `retriable` and for connection/timeout errors. Does not walk causes. */
export function isRetryableKafkaError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const name = stringProperty(err, 'name');
  if (name === undefined || !name.startsWith('KafkaJS')) return false;
  return (err as { retriable?: unknown }).retriable === true || RETRYABLE_KAFKA_ERROR_NAMES.has(name);
}

/**
 * The error followed by its causes: `cause`, kafkajs' `originalError`, and the
 * members of an AggregateError (or KafkaJSAggregateError). Cycles are cut.
 */
export function causeChain(err: unknown, maxLength = 20): unknown[] {
  const seen = new Set<unknown>();
  const pending: unknown[] = [err];
  while (pending.length > 0 && seen.size < maxLength) {
    const current = pending.shift();
    if (current === undefined || current === null || seen.has(current)) continue;
    seen.add(current);
    if (typeof current !== 'object') continue;
    const { cause, originalError, errors } = current as Record<string, unknown>;
    pending.push(cause, originalError);
    if (Array.isArray(errors)) pending.push(...(errors as unknown[]));
  }
  return [...seen];
}

/** A readable one-line message for any thrown value. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}
