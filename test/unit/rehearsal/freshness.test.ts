import { describe, expect, it } from 'vitest';
import { freshAt, freshAtOf, type FreshnessInput, staleAtEnd } from '../../../rehearsal/freshness.js';

/** An event received every 100 ms from `from` to `to` (ms). */
const steady = (from: number, to: number) =>
  Array.from({ length: Math.ceil((to - from) / 100) }, (_, i) => from + i * 100);

describe('time to fresh', () => {
  const kill = 10_000;
  const nextKill = 40_000;

  it('is the arrival of the last slow event between the kill and the next drill', () => {
    const input: FreshnessInput = { slowAt: [11_000, 18_500, 14_000], receivedAt: steady(0, 60_000) };
    expect(freshAt(input, kill, nextKill)).toBe(18_500);
  });

  it('is the kill itself when no event was slow: never stale', () => {
    expect(freshAt({ slowAt: [], receivedAt: steady(0, 60_000) }, kill, nextKill)).toBe(kill);
  });

  it('does not count slow events before the kill or from the next drill on', () => {
    const input: FreshnessInput = { slowAt: [9_999, 12_000, nextKill, 55_000], receivedAt: steady(0, 60_000) };
    expect(freshAt(input, kill, nextKill)).toBe(12_000);
  });

  it('is null when no event reached the consumer in the window, however close before or after: nothing to judge by', () => {
    expect(freshAt({ slowAt: [], receivedAt: [...steady(0, 10_000), 9_999] }, kill, nextKill)).toBeNull();
    expect(freshAt({ slowAt: [nextKill], receivedAt: [nextKill, 50_000] }, kill, nextKill)).toBeNull();
  });

  it('judges by one event at the window start', () => {
    expect(freshAt({ slowAt: [], receivedAt: [kill] }, kill, nextKill)).toBe(kill);
  });
});

describe('time to fresh from arrivals', () => {
  it('counts an arrival 1 s or more after its commit as slow, a faster one not', () => {
    const arrivals = [
      { at: 11_000, tookMs: 999 },
      { at: 12_000, tookMs: 1_000 },
      { at: 13_000, tookMs: 20 },
    ];
    expect(freshAtOf(arrivals, 10_000)).toBe(12_000);
    expect(freshAtOf(arrivals.slice(0, 1), 10_000)).toBe(10_000);
    expect(freshAtOf([], 10_000)).toBeNull();
  });
});

describe('stale when the window closed', () => {
  const kill = 10_000;
  const nextKill = 40_000;

  it('when the last arrival before the next drill was itself slow: the pages never came right', () => {
    const arrivals = steady(0, 39_950);
    const input: FreshnessInput = { slowAt: arrivals.filter((at) => at >= 12_000), receivedAt: arrivals };
    expect(staleAtEnd(input, kill, nextKill)).toBe(true);
  });

  it('not when a fast arrival followed the last slow one, nor when none was slow, nor with nothing in the window', () => {
    expect(staleAtEnd({ slowAt: [11_000, 20_000], receivedAt: steady(0, 60_000) }, kill, nextKill)).toBe(false);
    expect(staleAtEnd({ slowAt: [], receivedAt: steady(0, 60_000) }, kill, nextKill)).toBe(false);
    expect(staleAtEnd({ slowAt: [50_000], receivedAt: [50_000] }, kill, nextKill)).toBe(false);
  });

  it('judges only the window: a slow arrival at the next kill belongs to the next drill', () => {
    const receivedAt = [...steady(kill, nextKill), nextKill];
    expect(staleAtEnd({ slowAt: [nextKill], receivedAt }, kill, nextKill)).toBe(false);
  });
});
