/** The seat availability rules, one event at a time, as the set-based apply folds them. */
import { describe, expect, it } from 'vitest';
import { EVENTS } from '../../../events/catalogue.js';
import { type SeatEvent, microsOf, nextSeatState } from '../../../consumers/seat-availability/apply-seat-events.js';
import type { SourceRecord } from '../../../consumers/runtime/types.js';

/** An event's envelope at `time`, the same seat C1 every time. */
function envelope(type: string, time: string) {
  const record: SourceRecord = {
    topic: 't',
    partition: 0,
    offset: '0',
    key: null,
    value: null,
    headers: {},
    timestamp: '0',
  };
  return {
    id: `${type}@${time}`,
    source: 'test',
    subject: 'C1',
    time,
    timeMs: Date.parse(time),
    key: 'C1',
    schemaId: 1,
    record,
  };
}

const seat = { seat_id: 'C1', show_id: 's', section: 'C', row: '1', seat_number: 1 };
const held = (time: string, hold: string): SeatEvent => ({
  ...envelope(EVENTS.seatHeld.type, time),
  type: EVENTS.seatHeld.type,
  payload: {
    ...seat,
    hold_id: hold,
    buyer_id: 'b1',
    held_at: Date.parse(time),
    expires_at: Date.parse(time) + 600_000,
  },
});
const released = (time: string, hold: string): SeatEvent => ({
  ...envelope(EVENTS.seatReleased.type, time),
  type: EVENTS.seatReleased.type,
  payload: { ...seat, hold_id: hold, released_at: Date.parse(time) },
});
const sold = (time: string): SeatEvent => ({
  ...envelope(EVENTS.seatSold.type, time),
  type: EVENTS.seatSold.type,
  payload: { ...seat, order_id: 'o1', price_cents: 4500, sold_at: Date.parse(time) },
});

function fold(...events: SeatEvent[]) {
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
