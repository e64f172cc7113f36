/**
 * What the rehearsal shows while the crowd runs: seats, events published and handled per consumer,
 * lag, the slot's retained WAL and the alerts firing. On a terminal a small block redrawn in place;
 * otherwise (a pipe, a CI log) one plain line every few seconds.
 */
import type { Sample } from './record.js';

export interface LiveView {
  update(sample: Sample): void;
  /** Draws the last sample once more and leaves it on screen. */
  close(): void;
}

export function createLiveView(out: NodeJS.WriteStream): LiveView {
  void out;
  return { update: () => undefined, close: () => undefined };
}
