/**
 * Turns a Kafka record into a ConsumedEvent: the cloudevents SDK's Kafka binding reads the ce_*
 * headers (binary content mode), the registry decodes the Avro value (any registered version,
 * resolved into the consumer's reader schema), and the event type's parser validates it.
 */
import { type DecodeOptions, SchemaType } from '@kafkajs/confluent-schema-registry';
import { CloudEvent, Kafka } from 'cloudevents';
import { errorMessage } from '../../lib/errors.js';
import { type Registry, wireSchemaId } from '../../lib/schema-registry.js';
import { PoisonError, TransientError } from './failures.js';
import { headersAsStrings } from './headers.js';
import type { ConsumedEvent, EventTypeSpec, SourceRecord } from './types.js';

/** The record's CloudEvent attributes; throws PoisonError "not a cloudevent" when they are missing or invalid. */
export function parseCloudEvent(record: SourceRecord): CloudEvent<unknown> {
  const message = {
    headers: headersAsStrings(record.headers),
    key: record.key?.toString('utf8') ?? '',
    value: record.value,
    body: record.value,
    timestamp: record.timestamp,
  };
  try {
    const parsed = Kafka.toEvent(message);
    if (Array.isArray(parsed)) throw new Error('a batch of CloudEvents in one record is not supported');
    const event = parsed as CloudEvent<unknown>;
    event.validate();
    if (event.time === undefined) throw new Error('ce_time is missing');
    return event;
  } catch (cause) {
    throw new PoisonError('not a cloudevent', `the record is not a CloudEvent in binary mode: ${errorMessage(cause)}`, { cause });
  }
}

function statusOf(err: unknown): number | undefined {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** Fetches the writer's schema by id (cached by the client): 4xx is poison, anything else transient. */
async function requireWriterSchema(registry: Registry, schemaId: number): Promise<void> {
  try {
    await registry.client.getSchema(schemaId);
  } catch (cause) {
    const status = statusOf(cause);
    if (status !== undefined && status >= 400 && status < 500) {
      throw new PoisonError('unknown schema', `schema id ${schemaId} is not registered (HTTP ${status})`, { cause });
    }
    throw new TransientError('schema_registry_unavailable', `cannot read schema id ${schemaId}: ${errorMessage(cause)}`, { cause });
  }
}

type ReaderSchema = NonNullable<NonNullable<DecodeOptions[SchemaType.AVRO]>['readerSchema']>;
const readerSchemas = new Map<string, ReaderSchema>();

function parsedReaderSchema(text: string): ReaderSchema {
  let parsed = readerSchemas.get(text);
  if (parsed === undefined) {
    parsed = JSON.parse(text) as ReaderSchema;
    readerSchemas.set(text, parsed);
  }
  return parsed;
}

/** Decodes wire-format Avro with the writer's schema, resolved into `readerSchema` when given. */
export async function decodeAvroPayload(registry: Registry, value: Buffer | null, readerSchema?: string): Promise<{ schemaId: number; payload: unknown }> {
  const schemaId = value === null ? undefined : wireSchemaId(value);
  if (value === null || schemaId === undefined) {
    throw new PoisonError('undecodable', 'the value is not in the registry wire format (magic byte 0 + schema id)');
  }
  await requireWriterSchema(registry, schemaId);
  try {
    const options: DecodeOptions | undefined = readerSchema === undefined ? undefined : { [SchemaType.AVRO]: { readerSchema: parsedReaderSchema(readerSchema) } };
    return { schemaId, payload: (await registry.client.decode(value, options)) as unknown };
  } catch (cause) {
    throw new PoisonError('undecodable', `the Avro value does not decode with schema id ${schemaId}: ${errorMessage(cause)}`, { cause });
  }
}

function validatePayload(spec: EventTypeSpec, payload: unknown, type: string): unknown {
  try {
    return spec.parse(payload);
  } catch (cause) {
    throw new PoisonError('invalid payload', `the ${type} payload is invalid: ${errorMessage(cause)}`, { cause });
  }
}

/**
 * The decoded event, or undefined when its type is not one this consumer handles (skipped).
 * Throws PoisonError (the record is at fault) or TransientError (the registry is away).
 */
export async function decodeCloudEvent(
  registry: Registry,
  record: SourceRecord,
  eventTypes: Readonly<Record<string, EventTypeSpec>>,
): Promise<ConsumedEvent | undefined> {
  const cloudEvent = parseCloudEvent(record);
  const spec = eventTypes[cloudEvent.type];
  if (spec === undefined) return undefined;
  const { schemaId, payload } = await decodeAvroPayload(registry, record.value, spec.readerSchema);
  const time = cloudEvent.time ?? '';
  return {
    id: cloudEvent.id,
    type: cloudEvent.type,
    source: cloudEvent.source,
    subject: cloudEvent.subject,
    time,
    timeMs: Date.parse(time),
    key: record.key?.toString('utf8') ?? null,
    schemaId,
    payload: validatePayload(spec, payload, cloudEvent.type),
    record,
  };
}
