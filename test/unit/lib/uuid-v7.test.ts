import { describe, expect, it } from 'vitest';
import { uuidV7 } from '../../../lib/uuid-v7.js';

describe('uuidV7', () => {
  it('is a version 7, RFC 9562 variant uuid carrying the millisecond', () => {
    const id = uuidV7(1_795_000_000_123);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBeGreaterThanOrEqual(1_795_000_000_123);
  });

  it('sorts in creation order, also many within one millisecond', () => {
    const ids = Array.from({ length: 10_000 }, () => uuidV7(1_900_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    const later = uuidV7(1_900_000_000_500);
    expect(later > (ids.at(-1) ?? '')).toBe(true);
  });
});
