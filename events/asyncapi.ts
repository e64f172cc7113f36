/**
 * The event contract as an AsyncAPI 3.0 document, seen from a subscriber: one channel per topic
 * and per dead letter topic, one message per CloudEvent type with its Avro schema, the ce_*
 * headers, the key and the ordering promise. `npm run asyncapi` writes it to events/asyncapi.yaml.
 */
import { stringify } from 'yaml';
import { consumerSettings } from '../consumers/runtime/settings.js';
import {
  buildEventContract,
  PREFIX_PARAMETER,
  type EventContract,
  type HeaderFact,
  type MessageFact,
  type TopicFact,
} from './contract.js';

export const AVRO_SCHEMA_FORMAT = 'application/vnd.apache.avro;version=1.9.0';
const KAFKA_BINDING_VERSION = '0.5.0';

type Json = Record<string, unknown>;

/**
 * Per key, never across keys, and the one way late copies break it: the promise every event
 * channel makes, exactly as the pipeline keeps it (docs/subscribing.md has the reasons).
 */
export function orderingPromise(topic: TopicFact): string {
  return (
    `Per key: records with the same key (${topic.keyField}) are on one partition, in the order the seat service committed them, except for late copies: ` +
    'a copy re-sent after a Connect crash, re-emitted by a lost-slot recovery or put back by a redrive can arrive after newer events of its key, ' +
    'and after a recovery or a redrive that copy may be the first you see of its event. ' +
    "Deduplicate on ce_id, and never let an event whose ce_time is older than the last one applied to its key overwrite that key's state. " +
    'There is no order across keys or partitions.'
  );
}

function headerSchema(header: HeaderFact): Json {
  return {
    type: 'string',
    description: header.meaning,
    ...(header.format === undefined ? {} : { format: header.format }),
    ...(header.pattern === undefined ? {} : { pattern: header.pattern }),
    ...(header.value === undefined ? {} : { const: header.value }),
    ...(header.values === undefined ? {} : { enum: header.values }),
  };
}

function headersSchema(headers: readonly HeaderFact[], overrides: Record<string, Json> = {}): Json {
  return {
    type: 'object',
    required: headers.filter((h) => h.always).map((h) => h.name),
    properties: Object.fromEntries(headers.map((h) => [h.name, { ...headerSchema(h), ...overrides[h.name] }])),
  };
}

function keyBinding(topic: TopicFact): Json {
  return {
    type: 'string',
    description: `The aggregate id, ${topic.keyMeaning}, also in ce_subject. ${orderingPromise(topic)}`,
  };
}

function eventMessage(contract: EventContract, message: MessageFact): Json {
  const topic = contract.topics.find((t) => t.aggregateType === message.aggregateType);
  if (topic === undefined) throw new Error(`no topic for ${message.type}`);
  return {
    name: message.type,
    title: message.recordName,
    summary: message.meaning,
    contentType: contract.contentType,
    correlationId: {
      location: '$message.header#/ce_id',
      description: 'The event id; every delivery of the same event carries the same one.',
    },
    headers: {
      description: contract.headerRules,
      ...headersSchema(contract.headers, { ce_type: { const: message.type } }),
    },
    payload: { schemaFormat: AVRO_SCHEMA_FORMAT, schema: message.schema },
    // Every version of the schema that shipped (events/schemas/released); the payload is the last.
    'x-schema-versions': message.versions,
    bindings: {
      kafka: {
        key: keyBinding(topic),
        schemaIdLocation: 'payload',
        schemaIdPayloadEncoding: 'confluent',
        bindingVersion: KAFKA_BINDING_VERSION,
      },
    },
  };
}

function deadLetterMessage(contract: EventContract, topic: TopicFact): Json {
  const dlq = contract.deadLetterTopics.find((d) => d.aggregateType === topic.aggregateType);
  return {
    name: `${topic.aggregateType}.dead-letter`,
    title: `Dead letter of ${topic.address}`,
    summary:
      'A record a consumer could not handle: the original key, headers and value bytes, plus dlq_* headers saying why.',
    contentType: contract.contentType,
    correlationId: { location: '$message.header#/ce_id', description: 'The original event id.' },
    headers: {
      type: 'object',
      description: "The original record's headers (as on the source topic) and the dead letter's own.",
      required: (dlq?.headers ?? []).map((h) => h.name),
      properties: Object.fromEntries((dlq?.headers ?? []).map((h) => [h.name, headerSchema(h)])),
      additionalProperties: { type: 'string' },
    },
    payload: {
      type: 'string',
      format: 'binary',
      description: 'The original value bytes, untouched: decode them as on the source topic.',
    },
    bindings: { kafka: { key: keyBinding(topic), bindingVersion: KAFKA_BINDING_VERSION } },
  };
}

function channelId(topic: TopicFact, deadLetter = false): string {
  return deadLetter ? `${topic.aggregateType}DeadLetters` : topic.aggregateType;
}

function deadLetterId(topic: TopicFact): string {
  return `${topic.aggregateType}DeadLetter`;
}

const prefixParameter = (contract: EventContract): Json => ({
  [PREFIX_PARAMETER]: {
    default: contract.prefixDefault,
    description: 'TOPIC_PREFIX of the connector and the consumers.',
  },
});

function channels(contract: EventContract): Json {
  const entries: [string, Json][] = [];
  for (const topic of contract.topics) {
    entries.push([
      channelId(topic),
      {
        address: topic.address,
        title: `${topic.aggregateType} events`,
        description: `Every ${topic.aggregateType} event (the outbox rows whose aggregatetype is ${topic.aggregateType}). Key: ${topic.keyMeaning}. ${orderingPromise(topic)}`,
        parameters: prefixParameter(contract),
        messages: Object.fromEntries(topic.messages.map((name) => [name, { $ref: `#/components/messages/${name}` }])),
        bindings: { kafka: { partitions: contract.partitionsDefault, bindingVersion: KAFKA_BINDING_VERSION } },
        'x-ordering': orderingPromise(topic),
      },
    ]);
  }
  for (const dlq of contract.deadLetterTopics) {
    const topic = contract.topics.find((t) => t.aggregateType === dlq.aggregateType);
    if (topic === undefined) continue;
    entries.push([
      channelId(topic, true),
      {
        address: dlq.address,
        title: `${topic.aggregateType} dead letters`,
        description: `Records of ${topic.address} a consumer could not handle, after its delivery limit or past its deadline. One partition, ${dlq.retentionMs / 86_400_000} days of retention. \`npm run redrive\` puts chosen records back on ${topic.address} with the same ce_id.`,
        parameters: prefixParameter(contract),
        messages: { [deadLetterId(topic)]: { $ref: `#/components/messages/${deadLetterId(topic)}` } },
        bindings: {
          kafka: {
            partitions: 1,
            topicConfiguration: { 'retention.ms': dlq.retentionMs },
            bindingVersion: KAFKA_BINDING_VERSION,
          },
        },
      },
    ]);
  }
  return Object.fromEntries(entries);
}

function operations(contract: EventContract): Json {
  const entries: [string, Json][] = [];
  for (const topic of contract.topics) {
    const id = channelId(topic);
    entries.push([
      `receive${capitalized(id)}Events`,
      {
        action: 'receive',
        channel: { $ref: `#/channels/${id}` },
        summary: `Receive ${topic.aggregateType} events: at least once, in order per key; deduplicate on ce_id.`,
        messages: topic.messages.map((name) => ({ $ref: `#/channels/${id}/messages/${name}` })),
      },
    ]);
    const dlqId = channelId(topic, true);
    entries.push([
      `deadLetter${capitalized(id)}Events`,
      {
        action: 'send',
        channel: { $ref: `#/channels/${dlqId}` },
        summary: `A consumer on the runtime sends here the ${topic.aggregateType} records it cannot handle.`,
        messages: [{ $ref: `#/channels/${dlqId}/messages/${deadLetterId(topic)}` }],
      },
    ]);
  }
  return Object.fromEntries(entries);
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The AsyncAPI 3.0 document of the contract, as a plain object. */
function buildAsyncApiDocument(contract: EventContract = buildEventContract()): Json {
  const brokers = consumerSettings({ groupId: 'x', metricsPort: '0', deadlineMs: '1000', whenLate: 'keep-retrying' })
    .kafkaBrokers.default;
  const messages: [string, Json][] = contract.messages.map((m) => [m.name, eventMessage(contract, m)]);
  for (const topic of contract.topics) messages.push([deadLetterId(topic), deadLetterMessage(contract, topic)]);
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Stagefront seat and order events',
      version: '1.1.0',
      description: [
        'What a subscriber receives from the seat service: CloudEvents 1.0 in Kafka binary content mode (attributes in ce_* headers),',
        `the value Avro binary in the schema registry's framing (content-type ${contract.contentType}: magic byte 0, 4-byte big-endian schema id, Avro body).`,
        'Delivery is at least once: deduplicate on ce_id. Order holds per key only.',
        'Generated from events/catalogue.ts by `npm run asyncapi`; the readable page is docs/event-contract.md.',
      ].join(' '),
    },
    defaultContentType: contract.contentType,
    servers: {
      kafka: {
        host: '{brokers}',
        protocol: 'kafka',
        description: 'The Kafka cluster the outbox connector writes to.',
        variables: { brokers: { default: brokers, description: 'KAFKA_BROKERS: bootstrap brokers.' } },
      },
    },
    channels: channels(contract),
    operations: operations(contract),
    components: { messages: Object.fromEntries(messages) },
  };
}

/** The document as YAML text, as committed in events/asyncapi.yaml. */
export function renderAsyncApiYaml(contract: EventContract = buildEventContract()): string {
  const header =
    '# Generated by `npm run asyncapi` from events/catalogue.ts, events/schemas, connectors/seat-outbox.json\n# and the consumer runtime. Do not edit: change those and run the command again.\n';
  return header + stringify(buildAsyncApiDocument(contract), { aliasDuplicateObjects: false, lineWidth: 0 });
}
