/**
 * The email provider's refusal rules (bench/provider/throttle.ts) and its counts
 * (bench/provider/tally.ts), on clock values given by the test: no server, no timer.
 */
import { describe, expect, it } from 'vitest';
import { MessageTally } from '../../../bench/provider/tally.js';
import {
  RATE_EXCEEDED,
  TOO_MANY_CONNECTIONS,
  connectionRefusal,
  messageRefusal,
  openGate,
  type RateGate,
} from '../../../bench/provider/throttle.js';

/** How many of `count` messages sent at `at` get through. */
function passed(gate: RateGate, at: number, count: number): number {
  let through = 0;
  for (let i = 0; i < count; i += 1) if (messageRefusal(gate, at) === undefined) through += 1;
  return through;
}

describe('the connection rule (421)', () => {
  it('admits connections up to the limit and refuses the next with 421', () => {
    expect(connectionRefusal(0, 2)).toBeUndefined();
    expect(connectionRefusal(1, 2)).toBeUndefined();
    expect(connectionRefusal(2, 2)).toEqual(TOO_MANY_CONNECTIONS);
    expect(connectionRefusal(7, 2)?.code).toBe(421);
  });
});

describe('the rate gate (451)', () => {
  it('lets one second of messages through at once, then refuses with 451', () => {
    const gate = openGate(10, 0);
    expect(passed(gate, 0, 10)).toBe(10);
    expect(messageRefusal(gate, 0)).toEqual(RATE_EXCEEDED);
    expect(RATE_EXCEEDED.code).toBe(451);
  });

  it('refills at the rate: one message per 1/rate second, a full bucket after a second', () => {
    const gate = openGate(10, 0);
    passed(gate, 0, 10);
    expect(messageRefusal(gate, 99)).toEqual(RATE_EXCEEDED);
    expect(messageRefusal(gate, 100)).toBeUndefined();
    expect(messageRefusal(gate, 150)).toEqual(RATE_EXCEEDED);
    expect(passed(gate, 5_000, 20)).toBe(10);
  });

  it('holds a steady stream at the rate to the rate: 1 s at 40/s through a gate of 10/s passes 10 + 10', () => {
    const gate = openGate(10, 0);
    let through = 0;
    for (let ms = 0; ms < 1000; ms += 25) through += passed(gate, ms, 1);
    // The first second's burst plus what refilled during it (39 × 25 ms at 10/s ≈ 9.75).
    expect(through).toBeGreaterThanOrEqual(19);
    expect(through).toBeLessThanOrEqual(20);
  });

  it('spends nothing on a refused message, and a clock going backwards refills nothing', () => {
    const gate = openGate(2, 1_000);
    passed(gate, 1_000, 2);
    expect(passed(gate, 1_000, 5)).toBe(0);
    expect(passed(gate, 500, 1)).toBe(0);
    expect(passed(gate, 1_500, 2)).toBe(1);
  });

  it('refuses a rate that is not a positive number', () => {
    for (const rate of [0, -1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => openGate(rate, 0)).toThrow('ratePerSecond must be a positive number');
  });
});

describe('the counts', () => {
  it('counts accepted messages, distinct Message-IDs, copies beyond the first, and refusals by code', () => {
    const tally = new MessageTally();
    for (const id of ['a', 'b', 'a', 'a', undefined]) {
      tally.started();
      tally.accepted(id);
    }
    tally.refused(451);
    tally.refused(451);
    tally.refused(421);
    expect(tally.stats(3)).toEqual({
      accepted: 5,
      distinct: 2,
      duplicates: 2,
      refused: { 421: 1, 451: 2 },
      inFlight: 0,
      maxInFlight: 1,
      connections: 3,
    });
    expect(tally.messageIds()).toEqual(['a', 'b', 'a', 'a']);
  });

  it('tracks messages in flight and their high-water mark; a reset keeps those in flight', () => {
    const tally = new MessageTally();
    tally.started();
    tally.started();
    tally.started();
    tally.accepted('x');
    expect(tally.stats(0)).toMatchObject({ inFlight: 2, maxInFlight: 3 });
    tally.reset();
    expect(tally.stats(0)).toMatchObject({ accepted: 0, distinct: 0, inFlight: 2, maxInFlight: 2 });
    expect(tally.messageIds()).toEqual([]);
  });
});
