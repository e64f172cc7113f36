/**
 * What the monitor remembers between polls: when each slot was first seen inactive, and the
 * last few polls of retained WAL and outbox inserts (to spot WAL growing with no outbox writes).
 * Memory only: a restarted monitor starts counting again.
 */
import type { DatabaseReading } from './slot-readings.js';

interface Sample {
  active: boolean;
  retainedBytes: number | null;
  outboxInserts: number | null;
}

export interface WalGrowth {
  grownBytes: number;
  polls: number;
}

export class SlotHistory {
  readonly #windowPolls: number;
  readonly #inactiveSince = new Map<string, Date>();
  readonly #samples = new Map<string, Sample[]>();

  constructor(windowPolls: number) {
    this.#windowPolls = windowPolls;
  }

  observe(reading: DatabaseReading): void {
    const present = new Set(reading.slots.map((slot) => slot.slotName));
    for (const name of [...this.#samples.keys()]) {
      if (!present.has(name)) {
        this.#samples.delete(name);
        this.#inactiveSince.delete(name);
      }
    }
    for (const slot of reading.slots) {
      if (slot.active) this.#inactiveSince.delete(slot.slotName);
      else if (!this.#inactiveSince.has(slot.slotName)) this.#inactiveSince.set(slot.slotName, reading.takenAt);
      const samples = this.#samples.get(slot.slotName) ?? [];
      samples.push({ active: slot.active, retainedBytes: slot.retainedBytes, outboxInserts: reading.outboxInserts });
      if (samples.length > this.#windowPolls) samples.shift();
      this.#samples.set(slot.slotName, samples);
    }
  }

  /** When the monitor first saw the slot inactive (undefined while it is active). */
  inactiveSince(slotName: string): Date | undefined {
    return this.#inactiveSince.get(slotName);
  }

  /**
   * Over the whole window the slot was read (active), its retained WAL never shrank and grew by at
   * least `minBytes`, and the outbox got no insert: the reader has nothing to acknowledge.
   */
  walGrowingWithoutOutboxWrites(slotName: string, minBytes: number): WalGrowth | undefined {
    const samples = this.#samples.get(slotName) ?? [];
    if (samples.length < this.#windowPolls) return undefined;
    if (!samples.every((s) => s.active && s.retainedBytes !== null && s.outboxInserts !== null)) return undefined;
    const first = samples[0];
    const last = samples[samples.length - 1];
    if (!first || !last) return undefined;
    if (samples.some((s) => s.outboxInserts !== first.outboxInserts)) return undefined;
    for (let i = 1; i < samples.length; i += 1) {
      if ((samples[i]?.retainedBytes ?? 0) < (samples[i - 1]?.retainedBytes ?? 0)) return undefined;
    }
    const grownBytes = (last.retainedBytes ?? 0) - (first.retainedBytes ?? 0);
    return grownBytes >= minBytes ? { grownBytes, polls: samples.length } : undefined;
  }
}
