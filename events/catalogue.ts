/**
 * The event catalogue: the contract between the seat service and every consumer. Each event type
 * names its aggregate (which picks the Kafka topic), the field that is its key (which fixes the
 * order consumers see), its Avro schema file and registry subject, and what it means. The payload
 * types are generated from the schema files (events/payload-types.ts).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export type AggregateType = 'seat' | 'order';

export interface EventDefinition {
  type: string;
  aggregateType: AggregateType;
  /** Payload field whose value is the record key and the CloudEvents subject. */
  keyField: string;
  schemaFile: string;
  /** Registry subject: the Avro record's full name (several event types share one topic). */
  subject: string;
  meaning: string;
}

export const EVENT_SOURCE = '/stagefront/seat-service';
export const EVENT_CONTENT_TYPE = 'application/avro';

export const EVENTS = {
  seatHeld: {
    type: 'com.stagefront.seat.held',
    aggregateType: 'seat',
    keyField: 'seat_id',
    schemaFile: 'seat-held.avsc',
    subject: 'com.stagefront.events.SeatHeld',
    meaning: 'A buyer holds the seat until expires_at. Not available, not sold.',
  },
  seatReleased: {
    type: 'com.stagefront.seat.released',
    aggregateType: 'seat',
    keyField: 'seat_id',
    schemaFile: 'seat-released.avsc',
    subject: 'com.stagefront.events.SeatReleased',
    meaning: 'The buyer gave the held seat back; it is available again.',
  },
  seatHoldExpired: {
    type: 'com.stagefront.seat.hold_expired',
    aggregateType: 'seat',
    keyField: 'seat_id',
    schemaFile: 'seat-hold-expired.avsc',
    subject: 'com.stagefront.events.SeatHoldExpired',
    meaning: 'The hold ran out unconfirmed; the sweeper made the seat available again.',
  },
  seatSold: {
    type: 'com.stagefront.seat.sold',
    aggregateType: 'seat',
    keyField: 'seat_id',
    schemaFile: 'seat-sold.avsc',
    subject: 'com.stagefront.events.SeatSold',
    meaning: 'The seat belongs to an order, for good.',
  },
  orderConfirmed: {
    type: 'com.stagefront.order.confirmed',
    aggregateType: 'order',
    keyField: 'order_id',
    schemaFile: 'order-confirmed.avsc',
    subject: 'com.stagefront.events.OrderConfirmed',
    meaning: 'A hold became an order; the buyer is owed a confirmation email and the sale counts.',
  },
} as const satisfies Record<string, EventDefinition>;

export type EventName = keyof typeof EVENTS;

/** The payload types, generated from the schema files (npm run payload-types). */
export type {
  EventPayloads,
  OrderConfirmed,
  SeatHeld,
  SeatHoldExpired,
  SeatReleased,
  SeatSold,
} from './payload-types.js';
import { besideModule } from '../lib/source-tree.js';

/** An event type's ce_type, by its name: `EventType<'seatHeld'>` is `'com.stagefront.seat.held'`. */
export type EventType<N extends EventName = EventName> = (typeof EVENTS)[N]['type'];

const schemaDir = besideModule(import.meta.url, 'schemas');

export function readEventSchema(name: EventName): string {
  return readFileSync(join(schemaDir, EVENTS[name].schemaFile), 'utf8');
}

/** Where every version of the schemas that ever shipped is kept, as `<schema file stem>.v<N>.avsc`. */
export const RELEASED_SCHEMAS_DIR = 'events/schemas/released';

/**
 * Every version of an event's schema that shipped, oldest first: what consumers may still meet on
 * the topics (a recovery replays days of events). The newest is the schema file itself
 * (test/unit/events/schema-releases.test.ts), so a change to a schema ships as a new release file.
 */
export function releasedEventSchemas(name: EventName): { version: number; schema: string }[] {
  const stem = EVENTS[name].schemaFile.replace(/\.avsc$/, '');
  const folder = join(schemaDir, 'released');
  return readdirSync(folder)
    .map((file) => ({ file, match: new RegExp(`^${stem}\\.v(\\d+)\\.avsc$`).exec(file) }))
    .filter(({ match }) => match !== null)
    .map(({ file, match }) => ({ version: Number(match?.[1]), schema: readFileSync(join(folder, file), 'utf8') }))
    .sort((a, b) => a.version - b.version);
}

/** Kafka topic of an aggregate type: `<prefix>.<aggregate>` (the Outbox Event Router's route). */
export function topicFor(prefix: string, aggregateType: AggregateType): string {
  return `${prefix}.${aggregateType}`;
}

/** Dead letter topic of a source topic: one per source topic. */
export function deadLetterTopicFor(topic: string): string {
  return `${topic}.dlq`;
}
