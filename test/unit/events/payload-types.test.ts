/**
 * events/payload-types.ts is generated from the Avro schemas (npm run payload-types): the committed
 * file is what the schemas give, the generator maps each Avro type to what the runtime's decode
 * gives, and the payload validators (consumers/payloads.ts) name exactly each schema's fields.
 */
import { readFileSync } from 'node:fs';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { payloadSchemas } from '../../../consumers/payloads.js';
import { EVENTS, type EventName, readEventSchema } from '../../../events/catalogue.js';
import {
  PAYLOAD_TYPES_FILE,
  payloadTypesPath,
  renderPayloadTypes,
  renderSchemaTypes,
} from '../../../events/payload-types-main.js';

const names = Object.keys(EVENTS).filter((name): name is EventName => Object.hasOwn(EVENTS, name));

/** The body of each interface in `text`, by name: its fields as `name: type`, comments dropped. */
function interfaces(text: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const match of text.matchAll(/export interface (\w+) \{\n([\s\S]*?)\n\}/g)) {
    const body = (match[2] ?? '').replace(/\/\*\*[\s\S]*?\*\//g, '');
    found.set(
      match[1] ?? '',
      body
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== ''),
    );
  }
  return found;
}

describe(`${PAYLOAD_TYPES_FILE}, generated from events/schemas`, () => {
  it('is what npm run payload-types writes (run it after changing a schema)', async () => {
    expect(readFileSync(payloadTypesPath(), 'utf8')).toBe(await renderPayloadTypes());
  });

  it('has one interface per event, its fields those of the schema, read with avsc apart from the generator', async () => {
    const generated = interfaces(await renderPayloadTypes());
    for (const name of names) {
      const type = avro.Type.forSchema(JSON.parse(readEventSchema(name)) as avro.Schema) as avro.types.RecordType;
      const fields = generated.get(type.name?.split('.').at(-1) ?? '');
      expect(
        fields?.map((line) => line.slice(0, line.indexOf(':'))),
        EVENTS[name].schemaFile,
      ).toEqual(type.fields.map((field) => field.name));
    }
    expect(generated.get('EventPayloads')).toEqual(names.map((name) => expect.stringMatching(`^${name}: \\w+;$`)));
  });

  it.each([
    [
      'string, int, long, double, boolean',
      ['string', 'int', 'long', 'double', 'boolean'],
      ['string', 'number', 'number', 'number', 'boolean'],
    ],
    ['a logical type: its underlying type', [{ type: 'long', logicalType: 'timestamp-millis' }], ['number']],
    ['bytes and fixed: a Buffer', ['bytes', { type: 'fixed', name: 'F', size: 2 }], ['Buffer', 'Buffer']],
    ['a nullable field', [['null', 'string']], ['null | string']],
    ['an enum: its symbols', [{ type: 'enum', name: 'E', symbols: ['A', 'B'] }], ["'A' | 'B'"]],
    [
      'an array and a map',
      [
        { type: 'array', items: 'int' },
        { type: 'map', values: 'string' },
      ],
      ['number[]', 'Record<string, string>'],
    ],
    ['an array of a union', [{ type: 'array', items: ['null', 'int'] }], ['(null | number)[]']],
  ])('maps %s as the runtime decodes it', (_, types, expected) => {
    const schema = { type: 'record', name: 'T', fields: types.map((type, i) => ({ name: `f${i}`, type })) };
    const { rootName, records } = renderSchemaTypes(schema, 't.avsc');
    expect(rootName).toBe('T');
    expect(interfaces(records.get('T') ?? '').get('T')).toEqual(expected.map((type, i) => `f${i}: ${type};`));
  });

  it('renders a record named inside another as its own interface', () => {
    const inner = { type: 'record', name: 'com.x.Money', fields: [{ name: 'cents', type: 'long' }] };
    const schema = {
      type: 'record',
      name: 'com.x.Order',
      fields: [
        { name: 'total', type: inner },
        { name: 'refund', type: ['null', 'com.x.Money'] },
      ],
    };
    const { records } = renderSchemaTypes(schema, 'order.avsc');
    expect(interfaces([...records.values()].join('\n'))).toEqual(
      new Map([
        ['Order', ['total: Money;', 'refund: null | Money;']],
        ['Money', ['cents: number;']],
      ]),
    );
  });

  it('refuses a union avsc would decode wrapped ({ branch: value }), which no plain type describes', () => {
    const schema = { type: 'record', name: 'W', fields: [{ name: 'f', type: ['int', 'long'] }] };
    expect(() => renderSchemaTypes(schema, 'w.avsc')).toThrow(/has no payload type/);
  });

  it("each payload validator checks exactly its schema's fields", () => {
    for (const name of names) {
      const type = avro.Type.forSchema(JSON.parse(readEventSchema(name)) as avro.Schema) as avro.types.RecordType;
      expect(Object.keys(payloadSchemas[name].shape).sort(), name).toEqual(
        type.fields.map((field) => field.name).sort(),
      );
    }
  });
});
