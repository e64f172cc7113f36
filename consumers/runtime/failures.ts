/**
 * The failure model in one place (docs/design-decisions.md, "Retry to a deadline, not a count;
 * only a bad record is poison"): a failed delivery is the record's fault (poison: dead-lettered
 * after the delivery limit), a bug in the consumer's own code (handler-bug), or the
 * infrastructure's (everything else). Neither of the last two is ever counted against the record:
 * both are retried until the event type's deadline, then its policy applies.
 */
import {
  type ErrorCode,
  type TransientErrorCode,
  PipelineError,
  causeChain,
  errorMessage,
  isPostgresDataError,
  isUnansweredQuery,
  sqlState,
} from '../../lib/errors.js';

/** Why a record went to the dead letter topic; the `dlq_reason` header and the metric label. */
export type DeadLetterReason =
  | 'deadline exceeded'
  | 'not a cloudevent'
  | 'undecodable'
  | 'unknown schema'
  | 'invalid payload'
  | 'data error'
  | 'crashed the consumer';

/** The error code of each dead letter reason (lib/errors.ts ERROR_CODES). */
const POISON_CODES: Readonly<Record<DeadLetterReason, ErrorCode>> = {
  'deadline exceeded': 'deadline_exceeded',
  'not a cloudevent': 'not_a_cloudevent',
  undecodable: 'undecodable',
  'unknown schema': 'unknown_schema',
  'invalid payload': 'invalid_payload',
  'data error': 'data_error',
  'crashed the consumer': 'crashed_the_consumer',
};

/**
 * Thrown by a handler (or the runtime) to say "not this record's fault": a provider's 5xx, a
 * timeout, a busy claim. Any error that is not poison is treated so; this class gives it a code.
 */
export class TransientError extends PipelineError {
  constructor(
    code: TransientErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(code, message, options);
    this.name = 'TransientError';
  }
}

/**
 * The record itself is at fault; retrying it cannot help beyond the delivery limit. Handlers
 * throw it with reason "data error" for a value they cannot apply (e.g. an address the mail
 * server rejects for good).
 */
export class PoisonError extends PipelineError {
  readonly reason: DeadLetterReason;

  constructor(
    reason: DeadLetterReason,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(POISON_CODES[reason], message, options);
    this.name = 'PoisonError';
    this.reason = reason;
  }
}

export type Failure =
  /** `retryAfterMs`: the failure says when to try again (a provider's "slow down"), in place of the backoff. */
  | { kind: 'infrastructure'; code: string; message: string; retryAfterMs?: number }
  | { kind: 'poison'; reason: DeadLetterReason; message: string }
  /** `code`: the error's class (`TypeError`, …); `stack`: where in the consumer's code it was thrown. */
  | { kind: 'handler-bug'; code: string; message: string; stack: string };

export type FailureKind = Failure['kind'];

/** The built-in classes that only a programming error throws (`AssertionError`: node:assert's and test libraries'). */
const PROGRAMMING_ERROR_NAMES: ReadonlySet<string> = new Set([
  'TypeError',
  'ReferenceError',
  'RangeError',
  'SyntaxError',
  'EvalError',
  'URIError',
  'AssertionError',
]);

/**
 * A link that says the world failed, not the code: one of our errors (PipelineError, a
 * TransientError included), a Postgres error, a system error (`syscall`, or a code such as
 * ECONNREFUSED or undici's UND_ERR_SOCKET; Node's own ERR_* codes are left to the class), a
 * kafkajs error. `fetch failed` is a TypeError whose cause is such a link: not a bug.
 */
function isWorldFailure(link: unknown): boolean {
  if (link instanceof PipelineError) return true;
  const { code, syscall, name } = (link ?? {}) as { code?: unknown; syscall?: unknown; name?: unknown };
  if (typeof syscall === 'string') return true;
  if (typeof code === 'string' && code.length > 0 && !code.startsWith('ERR_')) return true;
  return typeof name === 'string' && name.startsWith('KafkaJS');
}

/** The programming error in the chain, unless some link says the world failed. */
function programmingError(chain: readonly unknown[]): Error | undefined {
  if (chain.some(isWorldFailure)) return undefined;
  return chain.find((link): link is Error => link instanceof Error && PROGRAMMING_ERROR_NAMES.has(link.name));
}

/** A short, bounded label for what failed: a SQLSTATE, a socket code, an error code or name. */
export function failureCode(err: unknown): string {
  for (const link of causeChain(err)) {
    const state = sqlState(link);
    if (state !== undefined) return state;
    if (isUnansweredQuery(link)) return 'postgres_unanswered';
  }
  // Any link's code before any name: `fetch failed` is a TypeError, its cause says ECONNREFUSED.
  for (const link of causeChain(err)) {
    const { code } = (link ?? {}) as { code?: unknown };
    if (typeof code === 'string' && code.length > 0 && code.length <= 40) return code;
  }
  for (const link of causeChain(err)) {
    const { name } = (link ?? {}) as { name?: unknown };
    if (typeof name === 'string' && name !== 'Error' && name.length <= 40) return name;
  }
  return 'error';
}

/**
 * Poison: a PoisonError anywhere in the cause chain (the decoder's reasons, or a handler's "data
 * error"), or a Postgres data error (SQLSTATE class 22 or 23). A handler bug: a TypeError,
 * ReferenceError, RangeError, SyntaxError, EvalError, URIError or AssertionError in the chain, with
 * no link that says the world failed (see `isWorldFailure`). Everything else, unknown errors
 * included, is the infrastructure's. A bug and an infrastructure failure hold the partition and
 * are retried, past the deadline an alert fires; a good record never reaches the dead letter topic
 * because a dependency is ill, or because the code that handles it is.
 */
export function classifyFailure(err: unknown): Failure {
  const message = errorMessage(err);
  const chain = causeChain(err);
  for (const link of chain) {
    if (link instanceof PoisonError) return { kind: 'poison', reason: link.reason, message };
    if (isPostgresDataError(link)) return { kind: 'poison', reason: 'data error', message };
  }
  const bug = programmingError(chain);
  if (bug !== undefined) return { kind: 'handler-bug', code: bug.name, message, stack: bug.stack ?? String(bug) };
  const retryAfterMs = retryAfterOf(chain);
  return {
    kind: 'infrastructure',
    code: failureCode(err),
    message,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}

/**
 * Whether an external effect says it never started (its details carry `notPerformed`: a gate
 * that refused to start it): its claim can be given up at once, nothing can have left the building.
 */
export function notPerformed(err: unknown): boolean {
  return causeChain(err).some((link) => link instanceof PipelineError && link.details.notPerformed === true);
}

/** The first `retryAfterMs` one of our errors in the chain carries in its details. */
function retryAfterOf(chain: readonly unknown[]): number | undefined {
  for (const link of chain) {
    const hint = link instanceof PipelineError ? link.details.retryAfterMs : undefined;
    if (typeof hint === 'number' && Number.isFinite(hint) && hint >= 0) return hint;
  }
  return undefined;
}
