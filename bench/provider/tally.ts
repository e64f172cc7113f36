/**
 * What the email provider counts: messages accepted (with their Message-IDs, repeats kept),
 * refused by reply code, and waiting for their accept delay.
 */
import type { Refusal } from './throttle.js';

export interface ProviderStats {
  /** Messages accepted (250), with or without a Message-ID. */
  accepted: number;
  /** Distinct Message-IDs among the accepted messages. */
  distinct: number;
  /**
   * Accepted copies beyond the first of a Message-ID: one accepted three times counts 2 (as the
   * rehearsal's email check counts them).
   */
  duplicates: number;
  /** Connections (421) and messages (451) refused, by reply code. */
  refused: Record<Refusal['code'], number>;
  /** Messages received in full and waiting for their accept delay. */
  inFlight: number;
  /** The most messages in flight at once since the start or the last reset. */
  maxInFlight: number;
  /** Connections open now (admitted, not refused). */
  connections: number;
}

function noRefusals(): ProviderStats['refused'] {
  return { 421: 0, 451: 0 };
}

export class MessageTally {
  #accepted = 0;
  #ids: string[] = [];
  #distinct = new Set<string>();
  #refused = noRefusals();
  #inFlight = 0;
  #maxInFlight = 0;

  /** A message received in full starts waiting for its delay. */
  started(): void {
    this.#inFlight += 1;
    this.#maxInFlight = Math.max(this.#maxInFlight, this.#inFlight);
  }

  /** A message that waited is accepted. */
  accepted(messageId: string | undefined): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    this.#accepted += 1;
    if (messageId === undefined) return;
    this.#ids.push(messageId);
    this.#distinct.add(messageId);
  }

  refused(code: Refusal['code']): void {
    this.#refused[code] += 1;
  }

  /** Counts start again; the messages in flight stay in flight. */
  reset(): void {
    this.#accepted = 0;
    this.#ids = [];
    this.#distinct = new Set();
    this.#refused = noRefusals();
    this.#maxInFlight = this.#inFlight;
  }

  stats(connections: number): ProviderStats {
    return {
      accepted: this.#accepted,
      distinct: this.#distinct.size,
      duplicates: this.#ids.length - this.#distinct.size,
      refused: { ...this.#refused },
      inFlight: this.#inFlight,
      maxInFlight: this.#maxInFlight,
      connections,
    };
  }

  messageIds(): readonly string[] {
    return this.#ids;
  }
}
