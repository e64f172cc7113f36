/** Seat watch: how many seats each show and section had held, given back and sold. */
import {
  type CatalogueEvent,
  type ConsumerDefinition,
  EVENTS,
  type LatePolicy,
  type PoolClient,
  besideModule,
  catalogueEventTypes,
  consumerSettings,
  defineConsumer,
  defineSettings,
  topicFor,
  zList,
} from '../../consumers/runtime/index.js';

/** A count is right however late: past the deadline the alert fires and the consumer keeps trying. */
const WHEN_LATE: LatePolicy = 'keep-retrying';

export const seatWatchSettings = defineSettings('seat-watch', {
  ...consumerSettings({ groupId: 'seat-watch', metricsPort: '9481', deadlineMs: '300000', whenLate: WHEN_LATE }),
  sections: {
    env: 'SEAT_WATCH_SECTIONS',
    default: '',
    parser: zList({ example: 'A,B' }),
    description: 'Sections to count (comma separated); empty counts every section.',
  },
});

/** The events seat watch reads; `event.payload` is typed by `event.type` (SeatHeld, SeatSold, …). */
type SeatEvent = CatalogueEvent<'seatHeld' | 'seatReleased' | 'seatHoldExpired' | 'seatSold'>;
type Column = 'held' | 'hold_ended' | 'sold';

const COLUMN_OF: Record<SeatEvent['type'], Column> = {
  [EVENTS.seatHeld.type]: 'held',
  [EVENTS.seatReleased.type]: 'hold_ended',
  [EVENTS.seatHoldExpired.type]: 'hold_ended',
  [EVENTS.seatSold.type]: 'sold',
};

/**
 * The batch's new events (the inbox already dropped redeliveries), added up per show and section
 * and written in one statement, inside the transaction that records them in the inbox.
 */
async function countSeatEvents(
  client: PoolClient,
  events: readonly SeatEvent[],
  sections: readonly string[],
): Promise<void> {
  const counts = new Map<string, { show: string; section: string; held: number; hold_ended: number; sold: number }>();
  for (const event of events) {
    const seat = event.payload;
    if (sections.length > 0 && !sections.includes(seat.section)) continue;
    const key = `${seat.show_id}\u0000${seat.section}`;
    const row = counts.get(key) ?? { show: seat.show_id, section: seat.section, held: 0, hold_ended: 0, sold: 0 };
    row[COLUMN_OF[event.type]] += 1;
    counts.set(key, row);
  }
  if (counts.size === 0) return;
  const rows = [...counts.values()];
  await client.query(
    /* sql */ `
    INSERT INTO seat_watch.show_activity AS a (show_id, section, held, hold_ended, sold)
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[])
    ON CONFLICT (show_id, section) DO UPDATE SET held = a.held + excluded.held, hold_ended = a.hold_ended + excluded.hold_ended,
      sold = a.sold + excluded.sold, updated_at = now()`,
    [
      rows.map((r) => r.show),
      rows.map((r) => r.section),
      rows.map((r) => r.held),
      rows.map((r) => r.hold_ended),
      rows.map((r) => r.sold),
    ],
  );
}

export function seatWatchConsumer(config: {
  groupId: string;
  topicPrefix: string;
  sections: readonly string[];
}): ConsumerDefinition<SeatEvent> {
  return defineConsumer({
    name: config.groupId,
    topics: [topicFor(config.topicPrefix, 'seat')],
    eventTypes: catalogueEventTypes(['seatHeld', 'seatReleased', 'seatHoldExpired', 'seatSold'], WHEN_LATE),
    effects: { kind: 'transactional', apply: (client, events) => countSeatEvents(client, events, config.sections) },
    migrations: { folder: besideModule(import.meta.url, 'migrations'), schema: 'seat_watch' },
  });
}
