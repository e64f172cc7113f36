/**
 * Records as the Outbox Event Router publishes them, for a consumer's tests: key = the aggregate
 * id, value = Avro in the registry wire format, the CloudEvent in `ce_*` headers (binary mode).
 * A test describes an event by its type and payload; the kit picks the schema (the catalogue's
 * `.avsc`), the key (the type's key field), the topic (the one of the consumer's topics that
 * carries the type's aggregate) and the offsets (one after the other per partition).
 */
import { randomUUID } from 'node:crypto';
import { EVENTS, EVENT_CONTENT_TYPE, EVENT_SOURCE } from '../../../events/catalogue.js';
import type { IHeaders } from '../../../lib/kafka.js';
import type { ConsumerDefinition, SourceRecord } from '../types.js';
import { type InProcessRegistry, catalogueName } from './registry.js';

/** An event as a test describes it; everything but `type` and `payload` has a default. */
export interface TestEvent {
  /** A catalogue name (`seatHeld`) or a ce_type. */
  type: string;
  payload: unknown;
  /** ce_id; a fresh uuid when omitted. Give the same one twice for a duplicate. */
  id?: string;
  /** The record key and ce_subject; default: the payload's key field (`seat_id`, `order_id`). */
  key?: string;
  /** ce_time (RFC 3339); default now. An old time makes an event late (its deadline past). */
  time?: string;
  /** The writer's Avro schema; default the catalogue's schema of the type. */
  schema?: string;
  /** Default: the consumer's topic of the type's aggregate (or its first topic). */
  topic?: string;
  partition?: number;
}

/** A record given as bytes and headers (a record that is not a CloudEvent, say); the kit sets topic and offset. */
export interface RawTestRecord {
  raw: { key?: Buffer | null; value: Buffer | null; headers: IHeaders; topic?: string; partition?: number };
}

/** The router's headers for one event. */
export function routerHeaders(event: {
  id: string;
  type: string;
  key: string;
  time: string;
  source?: string;
}): IHeaders {
  return {
    id: event.id,
    ce_id: event.id,
    ce_type: event.type,
    ce_source: event.source ?? EVENT_SOURCE,
    ce_specversion: '1.0',
    ce_time: event.time,
    ce_subject: event.key,
    'content-type': EVENT_CONTENT_TYPE,
  };
}

function topicOf(definition: ConsumerDefinition, type: string): string {
  const name = catalogueName(type);
  const aggregate = name === undefined ? undefined : EVENTS[name].aggregateType;
  const topic = definition.topics.find((t) => aggregate !== undefined && t.endsWith(`.${aggregate}`));
  const chosen = topic ?? definition.topics[0];
  if (chosen === undefined) throw new Error(`consumer ${definition.name} names no topic`);
  return chosen;
}

function keyOf(event: TestEvent): string {
  if (event.key !== undefined) return event.key;
  const name = catalogueName(event.type);
  const field = name === undefined ? undefined : EVENTS[name].keyField;
  const value: unknown =
    field !== undefined && typeof event.payload === 'object' && event.payload !== null
      ? Object.entries(event.payload).find(([k]) => k === field)?.[1]
      : undefined;
  if (typeof value !== 'string')
    throw new Error(`event of type ${event.type}: give it a key (its payload has no ${field ?? 'key field'})`);
  return value;
}

async function eventRecord(
  definition: ConsumerDefinition,
  registry: InProcessRegistry,
  event: TestEvent,
): Promise<Omit<SourceRecord, 'offset'>> {
  const name = catalogueName(event.type);
  const type = name === undefined ? event.type : EVENTS[name].type;
  const schema = event.schema ?? (name === undefined ? undefined : registry.catalogueId(name));
  if (schema === undefined) throw new Error(`event type ${event.type} is not in the catalogue: give its schema`);
  const schemaId = typeof schema === 'number' ? schema : registry.idOf(schema);
  const time = event.time ?? new Date().toISOString();
  const key = keyOf(event);
  return {
    topic: event.topic ?? topicOf(definition, type),
    partition: event.partition ?? 0,
    key: Buffer.from(key),
    value: await registry.encode(schemaId, event.payload),
    headers: routerHeaders({ id: event.id ?? randomUUID(), type, key, time }),
    timestamp: String(Date.parse(time)),
  };
}

/**
 * The records of `inputs` in order, offsets counted from 0 per topic and partition. Records
 * already built (`SourceRecord`) keep their own place and offset.
 */
export async function testRecords(
  definition: ConsumerDefinition,
  registry: InProcessRegistry,
  inputs: readonly (TestEvent | RawTestRecord | SourceRecord)[],
): Promise<SourceRecord[]> {
  const next = new Map<string, bigint>();
  const place = (record: Omit<SourceRecord, 'offset'>): SourceRecord => {
    const where = `${record.topic}\u0000${record.partition}`;
    const offset = next.get(where) ?? 0n;
    next.set(where, offset + 1n);
    return { ...record, offset: offset.toString() };
  };
  const records: SourceRecord[] = [];
  for (const input of inputs) {
    if ('offset' in input) records.push(input);
    else if ('raw' in input) {
      const { raw } = input;
      records.push(
        place({
          topic: raw.topic ?? definition.topics[0] ?? '',
          partition: raw.partition ?? 0,
          key: raw.key ?? null,
          value: raw.value,
          headers: raw.headers,
          timestamp: String(Date.now()),
        }),
      );
    } else records.push(place(await eventRecord(definition, registry, input)));
  }
  return records;
}
