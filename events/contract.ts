/**
 * The event contract as one model: what a subscriber sees on each topic. Built from the catalogue
 * (types, topics, keys, Avro schemas), the connector file (which outbox column becomes which
 * header) and the consumer runtime (dead letter topics and their headers), so the AsyncAPI
 * document and the page generated from it cannot say something the code does not do.
 */
import { readFileSync } from 'node:fs';
import { connectorSettings } from '../connectors/settings.js';
import { OUTBOX_CONNECTOR_FILE } from '../connectors/outbox-connector.js';
import { ATTRIBUTE_RULES, CE_ID_PATTERN } from '../consumers/runtime/cloud-event-checks.js';
import { DEAD_LETTER_RETENTION_MS } from '../consumers/runtime/consumer.js';
import { deadLetterHeaders } from '../consumers/runtime/dead-letter.js';
import type { DeadLetterReason } from '../consumers/runtime/failures.js';
import { REDRIVEN_AT_HEADER } from '../consumers/runtime/headers.js';
import {
  EVENT_CONTENT_TYPE,
  EVENT_SOURCE,
  EVENTS,
  deadLetterTopicFor,
  readEventSchema,
  releasedEventSchemas,
  topicFor,
  type AggregateType,
  type EventName,
} from './catalogue.js';

/** A record header: its name, what it means, and its value when it is the same on every record. */
export interface HeaderFact {
  name: string;
  meaning: string;
  /** The outbox column it comes from (event headers only). */
  column?: string;
  value?: string;
  /** The values it can take, when there are few. */
  values?: readonly string[];
  /** JSON Schema format of the value, when there is one. */
  format?: 'uri' | 'uri-reference' | 'date-time' | 'uuid';
  /** A regular expression the value matches, when the format alone says too little. */
  pattern?: string;
  /** False when some records lack it (see the meaning). */
  always: boolean;
}

interface FieldFact {
  name: string;
  /** The Avro type in words: `string`, `long (timestamp-millis)`, `array of string`. */
  type: string;
  /** JSON text of the default, when the field has one. */
  default?: string;
  doc?: string;
}

export interface MessageFact {
  name: EventName;
  type: string;
  meaning: string;
  aggregateType: AggregateType;
  keyField: string;
  subject: string;
  schemaFile: string;
  /** The Avro record's full name (namespace.name). */
  recordName: string;
  recordDoc?: string;
  /** The Avro schema, as in events/schemas. */
  schema: Record<string, unknown>;
  fields: FieldFact[];
  /** The versions of the schema that shipped (events/schemas/released), oldest first; the last is `schema`. */
  versions: number[];
}

export interface TopicFact {
  aggregateType: AggregateType;
  /** With the prefix as a placeholder: `{prefix}.seat`. */
  address: string;
  messages: EventName[];
  keyField: string;
  keyMeaning: string;
}

interface DeadLetterTopicFact {
  aggregateType: AggregateType;
  address: string;
  sourceAddress: string;
  retentionMs: number;
  /** Headers a dead letter adds to the original record's (which it keeps). */
  headers: HeaderFact[];
}

export interface EventContract {
  prefixDefault: string;
  partitionsDefault: number;
  contentType: string;
  source: string;
  /** The headers of every event record, in the order the connector places them. */
  headers: HeaderFact[];
  /** What a consumer on this runtime refuses in those headers (consumers/runtime/cloud-event-checks.ts). */
  headerRules: string;
  topics: TopicFact[];
  messages: MessageFact[];
  deadLetterTopics: DeadLetterTopicFact[];
  /** Added by redrive to a record it puts back; the deadline counts from it. */
  redrivenAt: HeaderFact;
}

/** Placeholder of the topic prefix in channel addresses. */
export const PREFIX_PARAMETER = 'prefix';

/** What each header means. A header the connector places that is missing here stops the build. */
const EVENT_HEADER_MEANINGS: Readonly<Record<string, Omit<HeaderFact, 'name' | 'column' | 'value'>>> = {
  ce_id: {
    meaning:
      'The event id: a UUIDv7 chosen when the business transaction wrote the outbox row, never regenerated, in lower-case canonical form (8-4-4-4-12 hex digits). A redelivery, a re-emit after a recovery and a redrive all carry the same ce_id: deduplicate on it.',
    format: 'uuid',
    pattern: CE_ID_PATTERN,
    always: true,
  },
  ce_type: {
    meaning:
      'The event type: picks the Avro schema and the meaning. Skip types you do not handle; new ones may appear.',
    always: true,
  },
  ce_source: {
    meaning: 'Who emitted the event, a non-empty URI-reference: always the seat service.',
    format: 'uri-reference',
    always: true,
  },
  ce_specversion: { meaning: 'CloudEvents version: 1.0, the only one this contract speaks.', always: true },
  ce_time: {
    meaning: 'When the business transaction wrote the event (RFC 3339, UTC). Deadlines and event age count from it.',
    format: 'date-time',
    always: true,
  },
  ce_subject: {
    meaning: 'The aggregate id: the same value as the record key (the seat id or the order id).',
    always: true,
  },
  ce_dataschema: {
    meaning:
      "Where the registry serves the writer's Avro schema: `<registry>/schemas/ids/<id>`, the id in the value's framing. Absent (or a header without a value) on events written before it was introduced.",
    format: 'uri',
    always: false,
  },
  ce_traceparent: {
    meaning:
      'The W3C trace context (traceparent) of the seat service operation that wrote the event: the CloudEvents distributed tracing extension. Link the span that handles the event to it. Absent (or a header without a value) on events written before it was introduced.',
    always: false,
  },
  'content-type': {
    meaning:
      "The value's encoding: one Avro datum in the registry framing (magic byte 0, 4-byte big-endian schema id, Avro binary).",
    always: true,
  },
};

/** Headers the Outbox Event Router adds by itself. */
const ROUTER_HEADERS: readonly HeaderFact[] = [
  { name: 'id', meaning: 'Added by the Outbox Event Router: the same value as ce_id.', format: 'uuid', always: true },
];

/** Fixed values of headers, from the code that writes them. */
const HEADER_VALUES: Readonly<Record<string, string>> = {
  ce_source: EVENT_SOURCE,
  ce_specversion: '1.0',
  'content-type': EVENT_CONTENT_TYPE,
};

/** Every dead letter reason of the runtime; the type check below fails when the runtime gains one. */
const DEAD_LETTER_REASONS = [
  'deadline exceeded',
  'not a cloudevent',
  'undecodable',
  'unknown schema',
  'invalid payload',
  'data error',
  'crashed the consumer',
] as const satisfies readonly DeadLetterReason[];
type UndescribedReason = Exclude<DeadLetterReason, (typeof DEAD_LETTER_REASONS)[number]>;
const everyReasonDescribed: [UndescribedReason] extends [never] ? true : UndescribedReason = true;

const DEAD_LETTER_HEADER_MEANINGS: Readonly<Record<string, Omit<HeaderFact, 'name'>>> = {
  dlq_reason: {
    meaning: `Why, one of: ${DEAD_LETTER_REASONS.join(', ')}.`,
    values: DEAD_LETTER_REASONS,
    always: everyReasonDescribed,
  },
  dlq_error: { meaning: "The last error's message (at most 2,000 characters).", always: true },
  dlq_first_failure_at: { meaning: 'When the record first failed (RFC 3339).', format: 'date-time', always: true },
  dlq_dead_lettered_at: { meaning: 'When it was dead-lettered (RFC 3339).', format: 'date-time', always: true },
  dlq_attempts: { meaning: 'Attempts made (a whole number, as text).', always: true },
  dlq_source_topic: { meaning: 'The topic it came from; redrive puts it back there.', always: true },
  dlq_source_partition: { meaning: 'Its partition there.', always: true },
  dlq_source_offset: { meaning: 'Its offset there.', always: true },
  dlq_consumer: { meaning: 'The consumer (group) that dead-lettered it.', always: true },
};

/** `column:header:alias` entries of the router's additional placement, in order. */
export function placedHeaders(connectorFile = OUTBOX_CONNECTOR_FILE): { column: string; header: string }[] {
  const config = JSON.parse(readFileSync(connectorFile, 'utf8')) as Record<string, string>;
  const placement = config['transforms.outbox.table.fields.additional.placement'] ?? '';
  return placement
    .split(',')
    .map((entry) => entry.split(':'))
    .filter(([, where]) => where === 'header')
    .map(([column, , alias]) => ({ column: column ?? '', header: alias ?? column ?? '' }));
}

function eventHeaders(): HeaderFact[] {
  const placed = placedHeaders().map(({ column, header }) => {
    const described = EVENT_HEADER_MEANINGS[header];
    if (described === undefined)
      throw new Error(
        `events/contract.ts: the connector places header ${header} (column ${column}), which EVENT_HEADER_MEANINGS does not describe`,
      );
    const value = HEADER_VALUES[header];
    return { name: header, column, ...described, ...(value === undefined ? {} : { value }) };
  });
  return [...placed, ...ROUTER_HEADERS];
}

/** The names of the headers the runtime adds to a dead letter, read from the function that adds them. */
function deadLetterHeaderFacts(): HeaderFact[] {
  const sample = deadLetterHeaders(
    { topic: 't', partition: 0, offset: '0', key: null, value: null, headers: {}, timestamp: '0' },
    { reason: 'undecodable', error: '', firstFailureAt: new Date(0), attempts: 1, consumer: 'c' },
  );
  return Object.keys(sample).map((name) => {
    const described = DEAD_LETTER_HEADER_MEANINGS[name];
    if (described === undefined)
      throw new Error(
        `events/contract.ts: the runtime adds dead letter header ${name}, which DEAD_LETTER_HEADER_MEANINGS does not describe`,
      );
    return { name, ...described };
  });
}

interface AvroField {
  name: string;
  type: unknown;
  default?: unknown;
  doc?: string;
}

/** An Avro type in words. */
function avroTypeWords(type: unknown): string {
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.map(avroTypeWords).join(' or ');
  const t = type as {
    type: string;
    items?: unknown;
    values?: unknown;
    logicalType?: string;
    name?: string;
    symbols?: string[];
  };
  if (t.logicalType !== undefined) return `${t.type} (${t.logicalType})`;
  if (t.type === 'array') return `array of ${avroTypeWords(t.items)}`;
  if (t.type === 'map') return `map of ${avroTypeWords(t.values)}`;
  if (t.type === 'enum') return `enum ${t.name ?? ''} (${(t.symbols ?? []).join(', ')})`;
  return t.name ?? t.type;
}

function messageFact(name: EventName): MessageFact {
  const definition = EVENTS[name];
  const schema = JSON.parse(readEventSchema(name)) as {
    name: string;
    namespace?: string;
    doc?: string;
    fields: AvroField[];
  };
  const recordName = schema.namespace === undefined ? schema.name : `${schema.namespace}.${schema.name}`;
  if (recordName !== definition.subject)
    throw new Error(
      `${definition.schemaFile}: record ${recordName} is not the catalogue's subject ${definition.subject}`,
    );
  if (!schema.fields.some((f) => f.name === definition.keyField))
    throw new Error(`${definition.schemaFile}: no key field ${definition.keyField}`);
  return {
    name,
    type: definition.type,
    meaning: definition.meaning,
    aggregateType: definition.aggregateType,
    keyField: definition.keyField,
    subject: definition.subject,
    schemaFile: definition.schemaFile,
    recordName,
    ...(schema.doc === undefined ? {} : { recordDoc: schema.doc }),
    schema: schema as unknown as Record<string, unknown>,
    fields: schema.fields.map((f) => ({
      name: f.name,
      type: avroTypeWords(f.type),
      ...('default' in f ? { default: JSON.stringify(f.default) } : {}),
      ...(f.doc === undefined ? {} : { doc: f.doc }),
    })),
    versions: releasedEventSchemas(name).map((release) => release.version),
  };
}

const KEY_MEANINGS: Readonly<Record<AggregateType, string>> = {
  seat: 'the seat id',
  order: 'the order id',
};

export function buildEventContract(): EventContract {
  const names = Object.keys(EVENTS) as EventName[];
  const messages = names.map(messageFact);
  const aggregates = [...new Set(messages.map((m) => m.aggregateType))];
  const prefix = `{${PREFIX_PARAMETER}}`;
  const topics = aggregates.map((aggregateType): TopicFact => {
    const own = messages.filter((m) => m.aggregateType === aggregateType);
    const keyFields = [...new Set(own.map((m) => m.keyField))];
    if (keyFields.length !== 1)
      throw new Error(`topic ${aggregateType}: its event types disagree on the key field (${keyFields.join(', ')})`);
    return {
      aggregateType,
      address: topicFor(prefix, aggregateType),
      messages: own.map((m) => m.name),
      keyField: keyFields[0] ?? '',
      keyMeaning: KEY_MEANINGS[aggregateType],
    };
  });
  const dlqHeaders = deadLetterHeaderFacts();
  return {
    prefixDefault: connectorSettings.settings.topicPrefix.default,
    partitionsDefault: Number(connectorSettings.settings.topicPartitions.default),
    contentType: EVENT_CONTENT_TYPE,
    source: EVENT_SOURCE,
    headers: eventHeaders(),
    headerRules: ATTRIBUTE_RULES,
    topics,
    messages,
    deadLetterTopics: topics.map((topic) => ({
      aggregateType: topic.aggregateType,
      address: deadLetterTopicFor(topic.address),
      sourceAddress: topic.address,
      retentionMs: Number(DEAD_LETTER_RETENTION_MS),
      headers: dlqHeaders,
    })),
    redrivenAt: {
      name: REDRIVEN_AT_HEADER,
      meaning:
        "Added by redrive when it puts a dead letter back (RFC 3339); the consumer's deadline counts from it instead of ce_time. Every other header, the key and the value are the original ones.",
      format: 'date-time',
      always: false,
    },
  };
}
