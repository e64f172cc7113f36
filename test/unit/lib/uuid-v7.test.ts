import { describe, expect, it } from 'vitest';
import { uuidV7 } from '../../../lib/uuid-v7.js';
import { waitFor } from '../../../lib/wait.js';

const millisecondOf = (id: string) => Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('uuidV7', () => {
  it('is a version 7, RFC 9562 variant uuid carrying the millisecond', () => {
    const before = Date.now();
    const id = uuidV7();
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(millisecondOf(id)).toBeGreaterThanOrEqual(before);
  });

  it('sorts in creation order, also many within one millisecond', async () => {
    const ids = Array.from({ length: 10_000 }, () => uuidV7());
    // Many ids share a millisecond: their order comes from the counter, not the clock.
    expect(new Set(ids.map(millisecondOf)).size).toBeLessThan(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    const last = ids.at(-1) ?? '';
    await waitFor(() => Date.now() > millisecondOf(last) + 1, {
      timeoutMs: 5_000,
      intervalMs: 1,
      description: 'the clock to pass the last id',
    });
    expect(uuidV7() > last).toBe(true);
  });
});
