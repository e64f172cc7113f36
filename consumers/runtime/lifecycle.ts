/**
 * The runtime's typed lifecycle events. Metrics (and tests) subscribe here, in one place,
 * instead of counting inside the processing code.
 */
import { EventEmitter } from 'node:events';
import type { DeadLetterReason, FailureKind } from './failures.js';

interface Where {
  topic: string;
  partition: number;
}

export interface RuntimeEventMap {
  applied: [Where & { type: string; count: number }];
  duplicate: [Where & { count: number }];
  skipped: [Where & { type: string }];
  retry: [Where & { kind: FailureKind; attempt: number; delayMs: number }];
  /** A group or record failed for reasons that are not the record's (the infrastructure, or a bug in the consumer) and holds its partition. */
  failing: [
    Where & {
      kind: 'infrastructure' | 'handler-bug';
      code: string;
      error: string;
      oldestEventAgeMs: number;
      pastDeadline: boolean;
    },
  ];
  /** The partition is no longer held by a failure (applied, dead-lettered, or given up for a rebalance). */
  recovered: [Where];
  deadLettered: [Where & { reason: DeadLetterReason }];
  batchFinished: [Where & { size: number; durationMs: number }];
  eventHandled: [Where & { ageMs: number }];
  partitionProgress: [Where & { lag: number }];
  /** The partition's oldest event not yet handled, by when its deadline started (ce_time, or its redrive); undefined: none waits. */
  waiting: [Where & { sinceMs: number | undefined }];
  groupJoined: [{ memberId: string }];
  crashed: [{ error: unknown; restart: boolean }];
}

export class RuntimeEvents {
  readonly #emitter = new EventEmitter();

  emit<K extends keyof RuntimeEventMap>(name: K, ...args: RuntimeEventMap[K]): void {
    this.#emitter.emit(name, ...args);
  }

  on<K extends keyof RuntimeEventMap>(name: K, listener: (...args: RuntimeEventMap[K]) => void): () => void {
    const wrapped = listener as (...args: unknown[]) => void;
    this.#emitter.on(name, wrapped);
    return () => this.#emitter.off(name, wrapped);
  }
}
