import { describe, expect, it } from 'vitest';
import { retryDelay, waitFor } from '../../../lib/wait.js';

describe('retryDelay', () => {
  it('spans the whole window from 0 to base * 2^attempt (full jitter)', () => {
    expect(retryDelay({ attempt: 0, baseMs: 100, capMs: 10_000, random: () => 0 })).toBe(0);
    expect(retryDelay({ attempt: 0, baseMs: 100, capMs: 10_000, random: () => 0.5 })).toBe(50);
    expect(retryDelay({ attempt: 3, baseMs: 100, capMs: 10_000, random: () => 0.5 })).toBe(400);
    expect(retryDelay({ attempt: 3, baseMs: 100, capMs: 10_000, random: () => 0.999_999 })).toBe(799);
  });

  it('never exceeds the cap, however many attempts', () => {
    for (const attempt of [5, 10, 50, 2_000]) {
      expect(retryDelay({ attempt, baseMs: 100, capMs: 1_000, random: () => 0.999_999 })).toBe(999);
    }
  });

  it('stays within [0, min(cap, base * 2^attempt)) with the real random source', () => {
    for (let attempt = 0; attempt < 12; attempt += 1) {
      const ceiling = Math.min(3_000, 50 * 2 ** attempt);
      for (let draw = 0; draw < 200; draw += 1) {
        const delay = retryDelay({ attempt, baseMs: 50, capMs: 3_000 });
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(ceiling);
      }
    }
  });
});

describe('waitFor', () => {
  it('polls until the condition returns a truthy value and returns it', async () => {
    let calls = 0;
    const value = await waitFor(
      async () => {
        calls += 1;
        return calls >= 3 ? { rows: calls } : undefined;
      },
      { timeoutMs: 5_000, intervalMs: 5, description: 'three calls' },
    );
    expect(value).toEqual({ rows: 3 });
    expect(calls).toBe(3);
  });

  it('treats a throwing condition as "not yet"', async () => {
    let calls = 0;
    const value = await waitFor(
      () => {
        calls += 1;
        if (calls < 3) throw new Error('not connected yet');
        return 'joined';
      },
      { timeoutMs: 5_000, intervalMs: 5, description: 'the group to join' },
    );
    expect(value).toBe('joined');
  });

  it('on timeout names what it waited for and the last value seen', async () => {
    await expect(
      waitFor(() => ({ lag: 3 }).lag === 0, { timeoutMs: 100, intervalMs: 10, description: 'consumer lag to reach 0' }),
    ).rejects.toThrow('Timed out after 100 ms waiting for consumer lag to reach 0; last value: false.');
  });

  it('on timeout names the last error seen', async () => {
    await expect(
      waitFor(
        () => {
          throw new Error('relation "inbox" does not exist');
        },
        { timeoutMs: 100, intervalMs: 10, description: 'the inbox row' },
      ),
    ).rejects.toThrow('waiting for the inbox row; last error: relation "inbox" does not exist.');
  });

  it('does not hang on a condition that never settles', { timeout: 5_000 }, async () => {
    await expect(
      waitFor(() => new Promise<boolean>(() => undefined), { timeoutMs: 100, description: 'a stuck query' }),
    ).rejects.toThrow('waiting for a stuck query; the condition never completed.');
  });
});
