import { AvroSchemaParser } from '@asyncapi/avro-schema-parser';
import { Parser, type AsyncAPIDocumentInterface, type Diagnostic } from '@asyncapi/parser';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { deadLetterHeaders } from '../../consumers/runtime/dead-letter.js';
import { AVRO_SCHEMA_FORMAT } from '../../events/asyncapi.js';
import { CONTRACT_FILES, contractFilePath, renderContractFiles } from '../../events/asyncapi-main.js';
import { EVENTS, deadLetterTopicFor, readEventSchema, topicFor, type EventName } from '../../events/catalogue.js';
import { buildEventContract, placedHeaders } from '../../events/contract.js';

/** Severities of @asyncapi/parser diagnostics (Spectral's): 0 error, 1 warning, 2 information, 3 hint. */
const ERROR = 0;
const WARNING = 1;

const committed = (file: string) => readFileSync(contractFilePath(file), 'utf8');

async function parseAsyncApi(
  text: string,
): Promise<{ document: AsyncAPIDocumentInterface | undefined; diagnostics: Diagnostic[] }> {
  const parser = new Parser();
  parser.registerSchemaParser(AvroSchemaParser());
  return parser.parse(text);
}

const describeDiagnostic = (d: Diagnostic) => `${d.code} at ${d.path.join('.')}: ${d.message}`;

describe('the event contract as AsyncAPI 3.0 (events/asyncapi.yaml)', () => {
  let document: AsyncAPIDocumentInterface | undefined;
  let diagnostics: Diagnostic[] = [];
  const raw = () =>
    parse(committed(CONTRACT_FILES.asyncapi)) as {
      asyncapi: string;
      channels: Record<string, { address: string; messages: Record<string, { $ref: string }>; 'x-ordering'?: string }>;
      components: {
        messages: Record<
          string,
          {
            name: string;
            contentType: string;
            headers: { required: string[]; properties: Record<string, { const?: string; description: string }> };
            payload: { schemaFormat: string; schema: unknown };
            bindings: { kafka: { key: { description: string }; schemaIdLocation?: string } };
          }
        >;
      };
    };

  beforeAll(async () => {
    ({ document, diagnostics } = await parseAsyncApi(committed(CONTRACT_FILES.asyncapi)));
  });

  it('parses with @asyncapi/parser (Avro schemas included) without errors; warnings are listed', () => {
    const warnings = diagnostics.filter((d) => d.severity === WARNING).map(describeDiagnostic);
    if (warnings.length > 0) console.warn(`AsyncAPI warnings:\n${warnings.join('\n')}`);
    expect(diagnostics.filter((d) => d.severity === ERROR).map(describeDiagnostic)).toEqual([]);
    expect(document).toBeDefined();
    expect(raw().asyncapi).toBe('3.0.0');
  });

  it('the parser catches a broken document: an Avro schema that is not Avro is an error', async () => {
    const broken = committed(CONTRACT_FILES.asyncapi).replace('type: record', 'type: recordz');
    const result = await parseAsyncApi(broken);
    expect(result.diagnostics.filter((d) => d.severity === ERROR).length).toBeGreaterThan(0);
  });

  it('the committed files equal a fresh generation from the catalogue', () => {
    for (const [file, text] of Object.entries(renderContractFiles())) {
      expect(committed(file) === text, `${file} is stale: run npm run asyncapi and commit the result`).toBe(true);
    }
  });

  it('every catalogue type is a message on its topic with its Avro schema, every ce_* header, the key and the ordering promise', () => {
    const doc = raw();
    const contract = buildEventContract();
    const ceHeaders = placedHeaders().map((h) => h.header);
    expect(ceHeaders).toEqual(
      expect.arrayContaining([
        'ce_id',
        'ce_type',
        'ce_source',
        'ce_specversion',
        'ce_time',
        'ce_subject',
        'ce_dataschema',
        'content-type',
      ]),
    );
    for (const name of Object.keys(EVENTS) as EventName[]) {
      const definition = EVENTS[name];
      const message = doc.components.messages[name];
      expect(message, name).toBeDefined();
      if (message === undefined) continue;
      expect(message.name).toBe(definition.type);
      expect(message.contentType).toBe('application/avro');
      expect(message.payload.schemaFormat).toBe(AVRO_SCHEMA_FORMAT);
      expect(message.payload.schema).toEqual(JSON.parse(readEventSchema(name)));
      expect(Object.keys(message.headers.properties)).toEqual(expect.arrayContaining(ceHeaders));
      // Required: every header but those older events lack (ce_dataschema and any added after it).
      expect(message.headers.required).toEqual(contract.headers.filter((h) => h.always).map((h) => h.name));
      expect(message.headers.required).toEqual(
        expect.arrayContaining([
          'ce_id',
          'ce_type',
          'ce_source',
          'ce_specversion',
          'ce_time',
          'ce_subject',
          'content-type',
        ]),
      );
      expect(message.headers.properties.ce_type?.const).toBe(definition.type);
      expect(message.bindings.kafka.key.description).toContain(definition.keyField);
      expect(message.bindings.kafka.schemaIdLocation).toBe('payload');

      const channel = doc.channels[definition.aggregateType];
      expect(channel?.address).toBe(topicFor('{prefix}', definition.aggregateType));
      expect(channel?.messages[name]?.$ref).toBe(`#/components/messages/${name}`);
      expect(channel?.['x-ordering']).toMatch(
        new RegExp(`^Per key: records with the same key \\(${definition.keyField}\\)`),
      );
    }
    // The parsed model agrees: each channel's messages are the catalogue's types of that aggregate.
    for (const channel of document?.channels().all() ?? []) {
      const names = channel
        .messages()
        .all()
        .map((m) => m.name());
      if (channel.address()?.endsWith('.dlq')) continue;
      const aggregate = channel.address()?.split('.').at(-1);
      expect(names.sort()).toEqual(
        Object.values(EVENTS)
          .filter((e) => e.aggregateType === aggregate)
          .map((e) => e.type)
          .sort(),
      );
    }
  });

  it('one dead letter channel per topic, with the headers the runtime adds', () => {
    const doc = raw();
    const added = Object.keys(
      deadLetterHeaders(
        { topic: 't', partition: 0, offset: '0', key: null, value: null, headers: {}, timestamp: '0' },
        { reason: 'data error', error: 'e', firstFailureAt: new Date(), attempts: 1, consumer: 'c' },
      ),
    );
    for (const aggregate of new Set(Object.values(EVENTS).map((e) => e.aggregateType))) {
      const channel = doc.channels[`${aggregate}DeadLetters`];
      expect(channel?.address).toBe(deadLetterTopicFor(topicFor('{prefix}', aggregate)));
      const message = doc.components.messages[`${aggregate}DeadLetter`];
      expect(Object.keys(message?.headers.properties ?? {})).toEqual(added);
    }
  });
});

describe('the readable page (docs/event-contract.md)', () => {
  const page = committed(CONTRACT_FILES.page);

  it('shows every type with its topic, key and each schema field, the headers, and what application/avro means', () => {
    for (const name of Object.keys(EVENTS) as EventName[]) {
      const definition = EVENTS[name];
      const section = page.split(`### \`${definition.type}\``)[1]?.split('\n### ')[0] ?? '';
      expect(section, definition.type).toContain(`key \`${definition.keyField}\``);
      for (const field of (JSON.parse(readEventSchema(name)) as { fields: { name: string }[] }).fields)
        expect(section).toContain(`| \`${field.name}\` |`);
    }
    for (const { header } of placedHeaders()) expect(page).toContain(`| \`${header}\` |`);
    expect(page).toContain('| 0 | magic byte, always 0 |');
    expect(page).toContain('a 32-bit big-endian integer');
    expect(page).toContain('Per key: records with the same key');
  });
});
