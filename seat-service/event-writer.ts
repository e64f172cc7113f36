import type { PoolClient } from '../lib/postgres.js';
import { freshTraceparent } from '../lib/tracing.js';
import { uuidV7 } from '../lib/uuid-v7.js';
import { encodeWithSchema, registerAvroSchema, type Registry } from '../lib/schema-registry.js';
import {
  EVENT_CONTENT_TYPE,
  EVENT_SOURCE,
  EVENTS,
  readEventSchema,
  type EventName,
  type EventPayloads,
} from '../events/catalogue.js';

export interface PendingEvent<N extends EventName = EventName> {
  name: N;
  payload: EventPayloads[N];
}

/** Writes events as outbox rows inside the caller's business transaction. */
export interface EventWriter {
  /**
   * Inserts one outbox row per event in one statement; returns the event ids (ce_id) in order.
   * `traceparent` is the writing operation's span (W3C); without one the rows get a fresh span
   * context of their own, so every event can still be followed from its consumers' spans.
   */
  write(client: PoolClient, events: PendingEvent[], at: Date, traceparent?: string): Promise<string[]>;
}

export interface EventWriterOptions {
  /** Prepended to every registry subject, for environments that share one registry. */
  subjectPrefix?: string;
  /** Where schema texts come from; the catalogue's files by default. */
  readSchema?: (name: EventName) => string;
  /**
   * The registry API as consumers reach it: each event's ce_dataschema is
   * `<base>/schemas/ids/<writer schema id>`. The registry's own URL by default.
   */
  dataSchemaBaseUrl?: string;
}

/** Where the registry serves the schema with this id (Confluent-compatible API). */
export function dataSchemaUrl(baseUrl: string, schemaId: number): string {
  return `${baseUrl.replace(/\/+$/, '')}/schemas/ids/${schemaId}`;
}

/**
 * Registers every schema of the catalogue (BACKWARD_TRANSITIVE: each must read every version
 * registered before it) before the service writes anything, so an incompatible change stops the
 * service at start, naming the subject and field.
 */
export async function createEventWriter(registry: Registry, options: EventWriterOptions = {}): Promise<EventWriter> {
  const schemaIds = new Map<EventName, number>();
  const readSchema = options.readSchema ?? readEventSchema;
  const dataSchemaBase = options.dataSchemaBaseUrl || registry.url;
  for (const name of Object.keys(EVENTS) as EventName[]) {
    const subject = `${options.subjectPrefix ?? ''}${EVENTS[name].subject}`;
    schemaIds.set(name, await registerAvroSchema(registry, subject, readSchema(name), 'BACKWARD_TRANSITIVE'));
  }
  return {
    async write(client, events, at, traceparent) {
      if (events.length === 0) return [];
      const rows = await Promise.all(events.map((event) => outboxRow(registry, schemaIds, event, at)));
      await client.query(
        /* sql */ `insert into outbox (id, aggregatetype, aggregateid, type, payload, ce_source, ce_time, ce_subject, content_type, ce_dataschema, ce_traceparent)
         select id, aggregatetype, aggregateid, type, payload, $5, $6, aggregateid, $7, dataschema, $10
           from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $8::bytea[], $9::text[])
             as e(id, aggregatetype, aggregateid, type, payload, dataschema)`,
        [
          rows.map((r) => r.id),
          rows.map((r) => r.aggregateType),
          rows.map((r) => r.aggregateId),
          rows.map((r) => r.type),
          EVENT_SOURCE,
          at.toISOString(),
          EVENT_CONTENT_TYPE,
          rows.map((r) => r.payload),
          rows.map((r) => dataSchemaUrl(dataSchemaBase, r.schemaId)),
          traceparent ?? freshTraceparent(),
        ],
      );
      return rows.map((r) => r.id);
    },
  };
}

async function outboxRow(registry: Registry, schemaIds: Map<EventName, number>, event: PendingEvent, _at: Date) {
  const definition = EVENTS[event.name];
  const schemaId = schemaIds.get(event.name);
  if (schemaId === undefined) throw new Error(`no schema registered for event ${event.name}`);
  const aggregateId = (event.payload as unknown as Record<string, unknown>)[definition.keyField];
  if (typeof aggregateId !== 'string') throw new Error(`event ${event.name} has no string ${definition.keyField}`);
  return {
    id: uuidV7(),
    aggregateType: definition.aggregateType,
    aggregateId,
    type: definition.type,
    schemaId,
    payload: await encodeWithSchema(registry, schemaId, event.payload),
  };
}
