/**
 * Errors that carry a code and their cause, and the one table that says which
 * failures are transient (worth retrying) and which are not.
 */

export interface PipelineErrorOptions {
  cause?: unknown;
  details?: Record<string, unknown>;
}

/** An error of ours: a stable snake_case `code` to alert and count on, and the cause. */
export class PipelineError extends Error {
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(code: string, message: string, options: PipelineErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'PipelineError';
    this.code = code;
    this.details = options.details ?? {};
  }
}

/**
 * Postgres SQLSTATEs worth retrying, keyed by full code (5 characters) or by
 * class (2 characters, the whole class is retryable).
 * https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
export const RETRYABLE_PG_CODES: Readonly<Record<string, string>> = {
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
export const RETRYABLE_NETWORK_CODES: ReadonlySet<string> = new Set([
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

export function isRetryablePgCode(code: string): boolean {
  return code in RETRYABLE_PG_CODES || (code.length === 5 && code.slice(0, 2) in RETRYABLE_PG_CODES);
}

/** True for a retryable SQLSTATE, a network error, or a pg "connection lost" error. Does not walk causes. */
export function isRetryablePgError(err: unknown): boolean {
  const code = stringProperty(err, 'code');
  if (code !== undefined) {
    if (/^[0-9A-Z]{5}$/.test(code) && isRetryablePgCode(code)) return true;
    if (RETRYABLE_NETWORK_CODES.has(code)) return true;
  }
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

/** True when the error, or anything in its cause chain, is a transient Postgres or Kafka failure. */
export function isTransient(err: unknown): boolean {
  return causeChain(err).some((link) => isRetryablePgError(link) || isRetryableKafkaError(link));
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
