/**
 * Produces records exactly as Debezium's Outbox Event Router publishes them: key = aggregate id,
 * value = Avro in the registry wire format, headers `id`, `ce_id`, `ce_type`, `ce_source`,
 * `ce_specversion`, `ce_time`, `ce_subject`, `ce_dataschema`, `ce_traceparent`, `content-type`.
 * test/seat-service/outbox-events.test.ts holds the fixture to a record the real router wrote.
 */
import { randomUUID } from 'node:crypto';
import { EVENT_CONTENT_TYPE, EVENT_SOURCE } from '../../events/catalogue.js';
import type { IHeaders, Message, Producer } from '../../lib/kafka.js';
import { type Registry, encodeWithSchema, registerAvroSchema } from '../../lib/schema-registry.js';
import { freshTraceparent } from '../../lib/tracing.js';
import { dataSchemaUrl } from '../../seat-service/event-writer.js';

export interface CloudEventRecord {
  type: string;
  /** The aggregate id: record key and ce_subject. */
  key: string;
  payload: unknown;
  schemaId: number;
  /** ce_id; a fresh uuid when omitted. Pass the same one to republish. */
  id?: string;
  /** ce_time (RFC 3339); now when omitted. */
  time?: string;
  source?: string;
  /** ce_traceparent (W3C); a fresh span's when omitted, as the seat service writes outside an operation. */
  traceparent?: string;
}

/** Registers `schemaText` under `subject` (BACKWARD) and returns its id. */
export function registerTestSchema(registry: Registry, subject: string, schemaText: string): Promise<number> {
  return registerAvroSchema(registry, subject, schemaText, 'BACKWARD');
}

/**
 * The router's headers for one event, in the order it places them. `dataschema` is left out when
 * not given, as on a row written before the column existed (or a record whose schema id is made up).
 */
export function routerHeaders(event: {
  id: string;
  type: string;
  key: string;
  time: string;
  source?: string;
  dataschema?: string;
  traceparent?: string;
}): IHeaders {
  return {
    id: event.id,
    ce_id: event.id,
    ce_type: event.type,
    ce_source: event.source ?? EVENT_SOURCE,
    ce_specversion: '1.0',
    ce_time: event.time,
    ce_subject: event.key,
    ...(event.dataschema === undefined ? {} : { ce_dataschema: event.dataschema }),
    ce_traceparent: event.traceparent ?? freshTraceparent(),
    'content-type': EVENT_CONTENT_TYPE,
  };
}

/** The Kafka message the router would publish for `event` (the value encoded through the registry). */
export async function cloudEventMessage(
  registry: Registry,
  event: CloudEventRecord,
): Promise<Message & { headers: IHeaders }> {
  const id = event.id ?? randomUUID();
  const time = event.time ?? new Date().toISOString();
  return {
    key: event.key,
    value: await encodeWithSchema(registry, event.schemaId, event.payload),
    headers: routerHeaders({
      id,
      type: event.type,
      key: event.key,
      time,
      ...(event.source ? { source: event.source } : {}),
      dataschema: dataSchemaUrl(registry.url, event.schemaId),
      ...(event.traceparent === undefined ? {} : { traceparent: event.traceparent }),
    }),
  };
}

/** Produces the events in order (per key order is the order given); returns their ce_ids. */
export async function produceCloudEvents(
  producer: Producer,
  registry: Registry,
  topic: string,
  events: readonly CloudEventRecord[],
): Promise<string[]> {
  const messages = await Promise.all(
    events.map((event) => cloudEventMessage(registry, { ...event, id: event.id ?? randomUUID() })),
  );
  await producer.send({ topic, acks: -1, messages });
  return messages.map((m) => String(m.headers.ce_id));
}

/** Produces raw messages (poison: broken headers or bytes) as they are. */
export async function produceRawMessages(producer: Producer, topic: string, messages: Message[]): Promise<void> {
  await producer.send({ topic, acks: -1, messages });
}
