/**
 * How a failed delivery is classified: transient (retry the same record until its deadline) or
 * poison (the record itself is at fault: dead-letter it after the delivery limit).
 */
import { PipelineError, errorMessage, isTransient } from '../../lib/errors.js';

/** Why a record went to the dead letter topic; the `dlq_reason` header and the metric label. */
export type DeadLetterReason =
  | 'deadline exceeded'
  | 'not a cloudevent'
  | 'undecodable'
  | 'unknown schema'
  | 'invalid payload'
  | 'handler failed';

/** Thrown by a handler (or the runtime) for a failure worth retrying: a provider's 5xx, a timeout, a busy claim. */
export class TransientError extends PipelineError {
  constructor(code: string, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'TransientError';
  }
}

/** A failure that lies in the record itself; retrying it cannot help beyond the delivery limit. */
export class PoisonError extends PipelineError {
  readonly reason: DeadLetterReason;

  constructor(reason: DeadLetterReason, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(reason.replaceAll(' ', '_'), message, options);
    this.name = 'PoisonError';
    this.reason = reason;
  }
}

export type FailureClass = { kind: 'transient'; message: string } | { kind: 'poison'; reason: DeadLetterReason; message: string };

function isTransientError(err: unknown): boolean {
  for (let link: unknown = err; link instanceof Error; link = link.cause) {
    if (link instanceof TransientError) return true;
  }
  return false;
}

/**
 * Transient: a TransientError anywhere in the cause chain, or what lib/errors' one table calls
 * transient (Postgres connection and serialization failures, Kafka retriable errors, network codes).
 * Everything else is poison; its reason is the PoisonError's, or "handler failed".
 */
export function classifyFailure(err: unknown): FailureClass {
  const message = errorMessage(err);
  if (err instanceof PoisonError) return { kind: 'poison', reason: err.reason, message };
  if (isTransientError(err) || isTransient(err)) return { kind: 'transient', message };
  return { kind: 'poison', reason: 'handler failed', message };
}
