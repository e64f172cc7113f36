/**
 * The failure model in one place (docs/design-decisions.md, "Retry to a deadline, not a count;
 * only a bad record is poison"): a failed delivery is either the record's fault (poison:
 * dead-lettered after the delivery limit) or the infrastructure's (everything else: never counted
 * against the record, retried until the event type's deadline).
 */
import {
  type ErrorCode,
  type TransientErrorCode,
  PipelineError,
  causeChain,
  errorMessage,
  isPostgresDataError,
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
  | { kind: 'infrastructure'; code: string; message: string }
  | { kind: 'poison'; reason: DeadLetterReason; message: string };

/** A short, bounded label for what failed: a SQLSTATE, a socket code, an error code or name. */
export function failureCode(err: unknown): string {
  for (const link of causeChain(err)) {
    const state = sqlState(link);
    if (state !== undefined) return state;
  }
  for (const link of causeChain(err)) {
    const { code, name } = (link ?? {}) as { code?: unknown; name?: unknown };
    if (typeof code === 'string' && code.length > 0 && code.length <= 40) return code;
    if (typeof name === 'string' && name !== 'Error' && name.length <= 40) return name;
  }
  return 'error';
}

/**
 * Poison: a PoisonError anywhere in the cause chain (the decoder's reasons, or a handler's "data
 * error"), or a Postgres data error (SQLSTATE class 22 or 23). Everything else, unknown errors
 * included, is the infrastructure's: the partition is held and retried, and past the deadline an
 * alert fires; a good record never reaches the dead letter topic because a dependency is ill.
 */
export function classifyFailure(err: unknown): Failure {
  const message = errorMessage(err);
  for (const link of causeChain(err)) {
    if (link instanceof PoisonError) return { kind: 'poison', reason: link.reason, message };
    if (isPostgresDataError(link)) return { kind: 'poison', reason: 'data error', message };
  }
  return { kind: 'infrastructure', code: failureCode(err), message };
}
