/**
 * Turns a Kafka record into a ConsumedEvent: the cloudevents SDK's Kafka binding reads the ce_*
 * headers (binary content mode), the registry decodes the Avro value (any registered version,
 * resolved into the consumer's reader schema), and the event type's parser validates it. Every
 * step is bounded before it allocates (decode-limits.ts): the record and its headers are measured
 * before the SDK reads them, the Avro body is walked against its writer's schema before avsc
 * decodes it.
 */
import avro from 'avsc';
import { CloudEvent, Kafka } from 'cloudevents';
import { errorMessage } from '../../lib/errors.js';
import { type Registry, wireSchemaId } from '../../lib/schema-registry.js';
import { AvroBoundsError, type AvroBodyLimits, avroBoundsChecker } from './avro-bounds.js';
import { DEFAULT_DECODE_LIMITS, type DecodeLimits, checkRecordBounds } from './decode-limits.js';
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
async function requireWriterSchema(registry: Registry, schemaId: number): Promise<avro.Type> {
  try {
    return (await registry.client.getSchema(schemaId)) as unknown as avro.Type;
  } catch (cause) {
    const status = statusOf(cause);
    if (status !== undefined && status >= 400 && status < 500) {
      throw new PoisonError('unknown schema', `schema id ${schemaId} is not registered (HTTP ${status})`, { cause });
    }
    throw new TransientError('schema_registry_unavailable', `cannot read schema id ${schemaId}: ${errorMessage(cause)}`, { cause });
  }
}

/** Checks the body against the limits (throws AvroBoundsError), then decodes it. */
type AvroDecode = (payload: Buffer, limits: AvroBodyLimits) => unknown;

/**
 * Per registry, writer schema id and reader schema: the decode function, built once. The registry
 * client builds the reader's avsc type and its resolver again on every decode, which cost more
 * CPU than the rest of a record's path in a backlog drain. Schema ids never change meaning.
 */
const decoders = new Map<string, AvroDecode>();

function decoderFor(registry: Registry, schemaId: number, writer: avro.Type, readerSchema: string | undefined): AvroDecode {
  const key = `${registry.url}\u0000${schemaId}\u0000${readerSchema ?? ''}`;
  let decode = decoders.get(key);
  if (decode === undefined) {
    let read: (payload: Buffer) => unknown;
    if (readerSchema === undefined) {
      read = (payload) => writer.fromBuffer(payload);
    } else {
      const reader = avro.Type.forSchema(JSON.parse(readerSchema) as avro.Schema);
      // Equal types decode directly; otherwise the writer's fields are resolved into the reader's (defaults, dropped fields).
      const resolver = reader.equals(writer) ? undefined : reader.createResolver(writer);
      read = resolver === undefined ? (payload) => reader.fromBuffer(payload) : (payload) => reader.fromBuffer(payload, resolver);
    }
    // The bytes are laid out by the writer's schema whatever the reader: that is what the walk follows.
    const check = avroBoundsChecker(writer);
    decode = (payload, limits) => {
      check(payload, limits);
      return read(payload);
    };
    decoders.set(key, decode);
  }
  return decode;
}

/**
 * Decodes wire-format Avro with the writer's schema, resolved into `readerSchema` when given; the
 * body is checked against `limits` first (DEFAULT_DECODE_LIMITS when none are given).
 */
export async function decodeAvroPayload(
  registry: Registry,
  value: Buffer | null,
  readerSchema?: string,
  limits: AvroBodyLimits = DEFAULT_DECODE_LIMITS,
): Promise<{ schemaId: number; payload: unknown }> {
  const schemaId = value === null ? undefined : wireSchemaId(value);
  if (value === null || schemaId === undefined) {
    throw new PoisonError('undecodable', 'the value is not in the registry wire format (magic byte 0 + schema id)');
  }
  const writer = await requireWriterSchema(registry, schemaId);
  try {
    return { schemaId, payload: decoderFor(registry, schemaId, writer, readerSchema)(value.subarray(WIRE_HEADER_BYTES), limits) };
  } catch (cause) {
    if (cause instanceof AvroBoundsError) throw new PoisonError('undecodable', `${cause.message} (schema id ${schemaId})`, { cause });
    throw new PoisonError('undecodable', `the Avro value does not decode with schema id ${schemaId}: ${errorMessage(cause)}`, { cause });
  }
}

/** Magic byte and the 4-byte schema id before the Avro body. */
const WIRE_HEADER_BYTES = 5;

function validatePayload(spec: EventTypeSpec, payload: unknown, type: string): unknown {
  try {
    return spec.parse(payload);
  } catch (cause) {
    throw new PoisonError('invalid payload', `the ${type} payload is invalid: ${errorMessage(cause)}`, { cause });
  }
}

/**
 * The decoded event, or undefined when its type is not one this consumer handles (skipped).
 * A record over one of `limits` is poison before anything of it is parsed. Throws PoisonError (the record is at fault) or TransientError (the registry is away).
 */
export async function decodeCloudEvent(
  registry: Registry,
  record: SourceRecord,
  eventTypes: Readonly<Record<string, EventTypeSpec>>,
  limits: DecodeLimits = DEFAULT_DECODE_LIMITS,
): Promise<ConsumedEvent | undefined> {
  checkRecordBounds(record, limits);
  const cloudEvent = parseCloudEvent(record);
  const spec = eventTypes[cloudEvent.type];
  if (spec === undefined) return undefined;
  const { schemaId, payload } = await decodeAvroPayload(registry, record.value, spec.readerSchema, limits);
  const time = cloudEvent.time ?? '';
  return {
    id: cloudEvent.id,
    type: cloudEvent.type,
    source: cloudEvent.source,
    subject: cloudEvent.subject,
    dataschema: cloudEvent.dataschema,
    time,
    timeMs: Date.parse(time),
    key: record.key?.toString('utf8') ?? null,
    schemaId,
    payload: validatePayload(spec, payload, cloudEvent.type),
    record,
  };
}
