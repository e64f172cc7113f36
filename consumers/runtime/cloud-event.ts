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
import { type Registry, registryAddress, registryMissing, wireSchemaId } from '../../lib/schema-registry.js';
import { AvroBoundsError, type AvroBodyLimits, avroBoundsChecker } from './avro-bounds.js';
import { DEFAULT_DECODE_LIMITS, type DecodeLimits, checkRecordBounds } from './decode-limits.js';
import { PoisonError, TransientError } from './failures.js';
import { attributeProblem } from './cloud-event-checks.js';
import { headersAsStrings } from './headers.js';
import type { EventOf, EventTypeSpec, EventTypes, SourceRecord } from './types.js';

/** The record's CloudEvent attributes; throws PoisonError "not a cloudevent" when they are missing or invalid. */
export function parseCloudEvent(record: SourceRecord): CloudEvent<unknown> {
  const headers = headersAsStrings(record.headers);
  const message = {
    headers,
    key: record.key?.toString('utf8') ?? '',
    value: record.value,
    body: record.value,
    timestamp: record.timestamp,
  };
  try {
    const problem = attributeProblem(record.headers, headers);
    if (problem !== undefined) throw new Error(problem);
    const parsed = Kafka.toEvent(message);
    if (Array.isArray(parsed)) throw new Error('a batch of CloudEvents in one record is not supported');
    const event = parsed as CloudEvent<unknown>;
    validateAttributes(event);
    if (event.time === undefined) throw new Error('ce_time is missing');
    return event;
  } catch (cause) {
    throw new PoisonError('not a cloudevent', `the record is not a CloudEvent in binary mode: ${errorMessage(cause)}`, {
      cause,
    });
  }
}

/** The SDK's validation, its complaints named by header (`ce_time must match format "date-time"`). */
function validateAttributes(event: CloudEvent<unknown>): void {
  try {
    event.validate();
  } catch (cause) {
    const errors = (cause as { errors?: unknown }).errors;
    const named = Array.isArray(errors)
      ? errors.map(
          (e: { instancePath?: string; message?: string }) =>
            `ce_${(e.instancePath ?? '').replace(/^\//, '') || 'attributes'} ${e.message ?? 'is invalid'}`,
        )
      : [];
    throw named.length > 0 ? new Error(named.join('; '), { cause }) : cause;
  }
}

/** The consumer's entry for a ce_type: own properties only, so `constructor` or `__proto__` is a type it does not handle. */
export function eventTypeSpec(
  eventTypes: Readonly<Record<string, EventTypeSpec>>,
  type: string,
): EventTypeSpec | undefined {
  return Object.hasOwn(eventTypes, type) ? eventTypes[type] : undefined;
}

function statusOf(err: unknown): number | undefined {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** Schema ids each registry has served this process, newest last: evidence that a later 404 is the record's. */
const servedIds = new WeakMap<Registry, number[]>();
const SERVED_IDS_KEPT = 4;

function rememberServed(registry: Registry, schemaId: number): void {
  const ids = servedIds.get(registry) ?? [];
  if (ids.at(-1) === schemaId) return;
  const kept = [...ids.filter((id) => id !== schemaId), schemaId].slice(-SERVED_IDS_KEPT);
  servedIds.set(registry, kept);
}

/**
 * Fetches the writer's schema by id (cached by the client). The registry's 404 for the id makes
 * the record poison ("unknown schema") only when the registry demonstrably holds this consumer's
 * schemas: its reader schema is registered under its
 * subject and the ids it read before still resolve. A registry that answers without them (a
 * wrong path, wiped, restored from an old backup, another environment's) is the infrastructure's:
 * the partition is held and the deadline alert fires, instead of the topic being emptied into the
 * dead letter topic.
 */
async function requireWriterSchema(registry: Registry, schemaId: number, readerSchema?: string): Promise<avro.Type> {
  try {
    const writer = (await registry.client.getSchema(schemaId)) as unknown as avro.Type;
    rememberServed(registry, schemaId);
    return writer;
  } catch (cause) {
    // Only a 404 can be the record's. Anything else is not an answer about the id: the client
    // reports a request that timed out or a refused connection as a 400 of its own making, and a
    // registry that refuses us (401, 403) or fails (5xx) says nothing about the record either.
    if (statusOf(cause) !== 404) {
      throw new TransientError(
        'schema_registry_unavailable',
        `cannot read schema id ${schemaId}: ${errorMessage(cause)}`,
        { cause },
      );
    }
    const evidence = {
      readerSchemas: readerSchema === undefined ? [] : [readerSchema],
      knownIds: (servedIds.get(registry) ?? []).filter((id) => id !== schemaId),
    };
    const missing = await registryMissing(registry, evidence);
    if (missing === undefined)
      throw new PoisonError('unknown schema', `schema id ${schemaId} is not registered (HTTP 404)`, { cause });
    const where = registryAddress(registry.url);
    throw new TransientError(
      'schema_registry_unavailable',
      `schema id ${schemaId} is not found at the schema registry ${where} (HTTP 404), and the registry does not show that it holds ` +
        `this consumer's schemas: ${missing}. It has lost its schemas, is not the registry the events were written to (a wrong URL or path, ` +
        'wiped, restored from an old backup), or is away. The partition is held, nothing is dead-lettered; point SCHEMA_REGISTRY_URL at ' +
        "the producers' registry (or restore its storage) and restart the consumer.",
      { cause, details: { registry: where, schemaId, status: 404 } },
    );
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

function decoderFor(
  registry: Registry,
  schemaId: number,
  writer: avro.Type,
  readerSchema: string | undefined,
): AvroDecode {
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
      read =
        resolver === undefined
          ? (payload) => reader.fromBuffer(payload)
          : (payload) => reader.fromBuffer(payload, resolver);
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
async function decodeAvroPayload(
  registry: Registry,
  value: Buffer | null,
  readerSchema?: string,
  limits: AvroBodyLimits = DEFAULT_DECODE_LIMITS,
): Promise<{ schemaId: number; payload: unknown }> {
  const schemaId = value === null ? undefined : wireSchemaId(value);
  if (value === null || schemaId === undefined) {
    throw new PoisonError('undecodable', 'the value is not in the registry wire format (magic byte 0 + schema id)');
  }
  const writer = await requireWriterSchema(registry, schemaId, readerSchema);
  try {
    return {
      schemaId,
      payload: decoderFor(registry, schemaId, writer, readerSchema)(value.subarray(WIRE_HEADER_BYTES), limits),
    };
  } catch (cause) {
    if (cause instanceof AvroBoundsError)
      throw new PoisonError('undecodable', `${cause.message} (schema id ${schemaId})`, { cause });
    throw new PoisonError(
      'undecodable',
      `the Avro value does not decode with schema id ${schemaId}: ${errorMessage(cause)}`,
      { cause },
    );
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
 * Typed by `eventTypes` (EventOf): its `type` is a key of `eventTypes` and its payload what that
 * entry's `parse` returned, which is the promise a typed handler relies on.
 */
export async function decodeCloudEvent<T extends EventTypes = EventTypes>(
  registry: Registry,
  record: SourceRecord,
  eventTypes: T,
  limits: DecodeLimits = DEFAULT_DECODE_LIMITS,
): Promise<EventOf<T> | undefined> {
  checkRecordBounds(record, limits);
  const cloudEvent = parseCloudEvent(record);
  const spec = eventTypeSpec(eventTypes, cloudEvent.type);
  if (spec === undefined) return undefined;
  const { schemaId, payload } = await decodeAvroPayload(registry, record.value, spec.readerSchema, limits);
  const time = cloudEvent.time ?? '';
  const event = {
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
  // The type was looked up in eventTypes and the payload came from that entry's parse: EventOf<T>.
  return event as EventOf<T>;
}

/**
 * Fetches the latest writer schema of the subject `readerSchema` is registered under (its record's
 * full name) and builds its decoder, so the first record after a start does not wait for the
 * registry and the decoder's compilation. Throws what the registry throws.
 */
export async function warmDecoder(registry: Registry, readerSchema: string): Promise<void> {
  const subject = (avro.Type.forSchema(JSON.parse(readerSchema) as avro.Schema) as avro.Type & { name?: string }).name;
  if (subject === undefined) return;
  const schemaId = await registry.client.getLatestSchemaId(subject);
  decoderFor(registry, schemaId, await requireWriterSchema(registry, schemaId, readerSchema), readerSchema);
}
