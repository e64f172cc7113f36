/**
 * docs/event-contract.md: the same model as the AsyncAPI document, as a page a person reads.
 * `npm run asyncapi` writes both; test/events/asyncapi.test.ts fails when either is stale.
 */
import { AVRO_SCHEMA_FORMAT, orderingPromise } from './asyncapi.js';
import { RELEASED_SCHEMAS_DIR } from './catalogue.js';
import { buildEventContract, type EventContract, type HeaderFact, type MessageFact } from './contract.js';

/** Text safe inside a Markdown table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function code(text: string): string {
  return `\`${text}\``;
}

function table(head: string[], rows: string[][]): string[] {
  return [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ];
}

function days(ms: number): string {
  return `${ms / 86_400_000} days`;
}

function topicsSection(contract: EventContract): string[] {
  const typesOf = (names: readonly string[]) =>
    contract.messages
      .filter((m) => names.includes(m.name))
      .map((m) => code(m.type))
      .join(', ');
  return [
    '## Topics',
    '',
    `Topic names start with the prefix, ${code('TOPIC_PREFIX')} (${code(contract.prefixDefault)} by default). Each topic has`,
    `${code('TOPIC_PARTITIONS')} partitions (${contract.partitionsDefault} by default).`,
    '',
    ...table(
      ['topic', 'key', 'event types', 'order'],
      contract.topics.map((t) => [
        code(t.address),
        `${t.keyMeaning} (${code(t.keyField)})`,
        typesOf(t.messages),
        orderingPromise(t),
      ]),
    ),
    '',
    '### Dead letter topics',
    '',
    "A consumer built on this project's runtime sends a record it cannot handle (a bad record after its delivery limit, or an",
    'event past its deadline whose type says so) to the dead letter topic of its source topic. It keeps the original key,',
    'value bytes and headers, and adds the headers below. `npm run redrive` puts chosen records back on the source topic,',
    `with the ${code(contract.redrivenAt.name)} header added (details: [subscribing](subscribing.md#dead-letters-and-redrive)).`,
    '',
    ...table(
      ['topic', 'source topic', 'partitions', 'retention'],
      contract.deadLetterTopics.map((d) => [code(d.address), code(d.sourceAddress), '1', days(d.retentionMs)]),
    ),
    '',
    ...headerTable(contract.deadLetterTopics[0]?.headers ?? [], false),
    `| ${code(contract.redrivenAt.name)} | ${cell(contract.redrivenAt.meaning)} |`,
    '',
  ];
}

function headerTable(headers: readonly HeaderFact[], withSource: boolean): string[] {
  if (!withSource)
    return table(
      ['header', 'meaning'],
      headers.map((h) => [code(h.name), h.meaning]),
    );
  return table(
    ['header', 'outbox column', 'value', 'on every record', 'meaning'],
    headers.map((h) => [
      code(h.name),
      h.column === undefined ? '(the router)' : code(h.column),
      h.value === undefined ? '' : code(h.value),
      h.always ? 'yes' : 'no',
      h.meaning,
    ]),
  );
}

function headersSection(contract: EventContract): string[] {
  return [
    '## Headers',
    '',
    'Every event is a CloudEvent 1.0 in Kafka binary content mode: its attributes are record headers, UTF-8 text,',
    'and the record value is the data alone. The Outbox Event Router copies them from the outbox row',
    `(${code('connectors/seat-outbox.json')}, ${code('table.fields.additional.placement')}). A header without a value counts as absent.`,
    '',
    ...headerTable(contract.headers, true),
    '',
    contract.headerRules,
    '',
    "Debezium also adds `__debezium.context.*` headers (the connector's name, task and run): they describe the pipeline, not the",
    'event, and are not part of the contract. Ignore them, and any other header you do not know.',
    '',
  ];
}

function avroSection(contract: EventContract): string[] {
  return [
    `## What ${code(contract.contentType)} means here`,
    '',
    `${code(`content-type: ${contract.contentType}`)} means the value is one Avro datum in the schema registry's framing:`,
    '',
    '| bytes | what |',
    '| --- | --- |',
    '| 0 | magic byte, always 0 |',
    "| 1–4 | the writer's schema id in the registry, a 32-bit big-endian integer |",
    '| 5 to the end | the record in Avro binary encoding, written with that schema (no Avro container file, no schema inside) |',
    '',
    `The writer's schema is at the URL in ${code('ce_dataschema')} (${code('<registry>/schemas/ids/<id>')}), or, for an event`,
    `without that header, at ${code('<registry>/schemas/ids/<id>')} with the id from bytes 1–4. The registry answers with JSON whose`,
    `${code('schema')} field holds the Avro schema as text. The registry is Apicurio Registry's Confluent-compatible API`,
    `(${code('/apis/ccompat/v7')}); each event type's schema is registered under the subject named in its section below, and`,
    `the AsyncAPI document gives it with schemaFormat ${code(AVRO_SCHEMA_FORMAT)}.`,
    '',
    'What a consumer in any language needs:',
    '',
    '1. A Kafka client that reads record headers. Read `ce_type` first and skip the types it does not handle (new types may appear).',
    '2. Check byte 0 is 0 and read the schema id; fetch that schema once per id and cache it: an id never changes meaning.',
    "3. An Avro library that decodes binary data with a writer's schema and resolves it into the reader's schema the",
    '   consumer was written against (Avro schema resolution: a field the reader lacks is skipped, a field the writer lacks',
    "   takes the reader's default). Then every version ever registered for the subject decodes into the same shape.",
    `   Every version that shipped is kept in ${code(RELEASED_SCHEMAS_DIR)}; each reads every older one (the registry's`,
    `   ${code('BACKWARD_TRANSITIVE')}), so a field is only ever added with a default, and an old event reads as the newest`,
    "   version with that default (null for the seat's `row` and `seat_number`, which came in version 2).",
    '4. Timestamps (`long`, `timestamp-millis`) are milliseconds since the Unix epoch, UTC. Text is UTF-8.',
    '5. Deduplicate on `ce_id` and commit the offset only after the effect (see [subscribing](subscribing.md)).',
    '',
    'Kafka Avro deserializers that speak the Confluent registry protocol read this framing as it is: point them at',
    `${code('<registry>/apis/ccompat/v7')}. This project's consumers use ${code('@kafkajs/confluent-schema-registry')} and ${code('avsc')}`,
    `(${code('consumers/runtime/cloud-event.ts')}).`,
    '',
  ];
}

/** The schema's newest shipped version; a schema that never shipped is a mistake to name, not a version 1. */
function newestVersion(message: MessageFact): number {
  const newest = message.versions.at(-1);
  if (newest === undefined)
    throw new Error(`${message.schemaFile} has no release in ${RELEASED_SCHEMAS_DIR}: add it as version 1`);
  return newest;
}

function messageSection(contract: EventContract, message: MessageFact): string[] {
  const topic = contract.topics.find((t) => t.aggregateType === message.aggregateType);
  return [
    `### ${code(message.type)}`,
    '',
    message.meaning,
    '',
    `Topic ${code(topic?.address ?? '')}, key ${code(message.keyField)} (also ${code('ce_subject')}). Avro record ${code(message.recordName)},`,
    `registry subject ${code(message.subject)} (after ${code('SCHEMA_SUBJECT_PREFIX')}, when one is set), schema file`,
    `[${code(`events/schemas/${message.schemaFile}`)}](../events/schemas/${message.schemaFile}), version ${newestVersion(message)}`,
    `(every version that shipped: ${message.versions.map((v) => `[${v}](../${RELEASED_SCHEMAS_DIR}/${message.schemaFile.replace(/\.avsc$/, '')}.v${v}.avsc)`).join(', ')}).`,
    ...(message.recordDoc === undefined ? [] : ['', `> ${message.recordDoc}`]),
    '',
    ...table(
      ['field', 'Avro type', 'default', 'note'],
      message.fields.map((f) => [
        code(f.name),
        f.type,
        f.default === undefined ? '' : code(f.default),
        [f.name === message.keyField ? 'the key' : '', f.doc ?? ''].filter(Boolean).join('; '),
      ]),
    ),
    '',
  ];
}

/** The whole page. */
export function renderContractPage(contract: EventContract = buildEventContract()): string {
  const lines = [
    '# The event contract',
    '',
    '<!-- Generated by `npm run asyncapi` from the event catalogue; do not edit by hand. -->',
    '',
    'What a subscriber receives from the seat service, generated from the same model as the AsyncAPI 3.0 document',
    '[`events/asyncapi.yaml`](../events/asyncapi.yaml) (the catalogue `events/catalogue.ts`, the schemas in `events/schemas/`, the',
    'connector file and the consumer runtime). `npm run asyncapi` writes both, and a test fails when either differs from the',
    'code. What a subscriber can rely on (delivery, duplicates, order, schema changes, dead letters, lag):',
    '[subscribing](subscribing.md).',
    '',
    ...topicsSection(contract),
    ...headersSection(contract),
    ...avroSection(contract),
    '## Event types',
    '',
    ...contract.messages.flatMap((m) => messageSection(contract, m)),
  ];
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}
