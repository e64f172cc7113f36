/**
 * The runtime's typed lifecycle events. Metrics (and tests) subscribe here, in one place,
 * instead of counting inside the processing code.
 */
import { EventEmitter } from 'node:events';
import type { DeadLetterReason } from './failures.js';

interface Where {
  topic: string;
  partition: number;
}

export interface RuntimeEventMap {
  applied: [Where & { type: string; count: number }];
  duplicate: [Where & { count: number }];
  skipped: [Where & { type: string }];
  retry: [Where & { kind: 'transient' | 'poison'; attempt: number; delayMs: number }];
  deadLettered: [Where & { reason: DeadLetterReason }];
  batchFinished: [Where & { size: number; durationMs: number }];
  eventHandled: [Where & { ageMs: number }];
  partitionProgress: [Where & { lag: number }];
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
