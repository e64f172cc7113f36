/** The seat availability rules, one event at a time, as the set-based apply folds them. */
import { describe, expect, it } from 'vitest';
import { EVENTS } from '../../../events/catalogue.js';
import { microsOf, nextSeatState } from '../../../consumers/seat-availability/apply-seat-events.js';
import type { ConsumedEvent } from '../../../consumers/runtime/types.js';

function event(type: string, time: string, payload: Record<string, unknown>): ConsumedEvent {
  return {
    id: `${type}@${time}`,
    type,
    source: 'test',
    subject: 'C1',
    time,
    timeMs: Date.parse(time),
    key: 'C1',
    schemaId: 1,
    payload: { seat_id: 'C1', show_id: 's', section: 'C', ...payload },
    record: {} as ConsumedEvent['record'],
  };
}

const held = (time: string, hold: string) => event(EVENTS.seatHeld.type, time, { hold_id: hold });
const released = (time: string, hold: string) => event(EVENTS.seatReleased.type, time, { hold_id: hold });
const sold = (time: string) => event(EVENTS.seatSold.type, time, { order_id: 'o1' });

function fold(...events: ConsumedEvent[]) {
  return events.reduce<ReturnType<typeof nextSeatState> | undefined>((row, e) => nextSeatState(row, e), undefined);
}

describe('seat availability rules', () => {
  it('reads microseconds in ce_time, which Date.parse drops', () => {
    expect(microsOf('2026-12-01T10:00:00.123456Z') - microsOf('2026-12-01T10:00:00.123Z')).toBe(456);
  });

  it('an older hold never overwrites a newer release, even within the same millisecond', () => {
    const row = fold(released('2026-12-01T10:00:00.123900Z', 'h1'), held('2026-12-01T10:00:00.123100Z', 'h1'));
    expect(row?.state).toBe('available');
  });

  it('a release frees only the hold it names, and a sale stays sold', () => {
    expect(fold(held('2026-12-01T10:00:01Z', 'h1'), released('2026-12-01T10:00:02Z', 'h2'))?.state).toBe('held');
    expect(
      fold(held('2026-12-01T10:00:01Z', 'h1'), sold('2026-12-01T10:00:02Z'), held('2026-12-01T10:00:03Z', 'h3'))?.state,
    ).toBe('sold');
    expect(fold(sold('2026-12-01T10:00:05Z'), released('2026-12-01T10:00:06Z', 'h1'))?.state).toBe('sold');
  });
});
