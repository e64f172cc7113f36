import { describe, expect, it } from 'vitest';
import { freshAt, type FreshnessInput } from '../../../rehearsal/freshness.js';

/** Events received in each second from `from` to `to` (seconds), as latencyOverTime counts them. */
const everySecond = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => ({ at: (from + i) * 1_000, count: 10 }));

describe('time to fresh', () => {
  const kill = 10_000;
  const nextKill = 40_000;

  it('is the arrival of the last slow event between the kill and the next drill', () => {
    const input: FreshnessInput = { slowAt: [11_000, 18_500, 14_000], points: everySecond(0, 60) };
    expect(freshAt(input, kill, nextKill)).toBe(18_500);
  });

  it('is the kill itself when no event was slow: never stale', () => {
    expect(freshAt({ slowAt: [], points: everySecond(0, 60) }, kill, nextKill)).toBe(kill);
  });

  it('does not count slow events before the kill or from the next drill on', () => {
    const input: FreshnessInput = { slowAt: [9_999, 12_000, nextKill, 55_000], points: everySecond(0, 60) };
    expect(freshAt(input, kill, nextKill)).toBe(12_000);
  });

  it('is null when no event reached the consumer in the window: nothing to judge by', () => {
    expect(freshAt({ slowAt: [], points: everySecond(0, 9) }, kill, nextKill)).toBeNull();
    expect(freshAt({ slowAt: [], points: [{ at: 20_000, count: 0 }] }, kill, nextKill)).toBeNull();
  });

  it('counts the second the kill falls in as received within the window', () => {
    expect(freshAt({ slowAt: [], points: [{ at: 9_500, count: 3 }] }, kill, nextKill)).toBe(kill);
  });
});
