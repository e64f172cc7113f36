/**
 * `incompatibleFields`: why a new Avro record schema cannot read what an older one wrote
 * (BACKWARD), field by field. Empty exactly when Avro's schema resolution reads the old data
 * with the new schema: legal promotions (int → long → float → double, string ↔ bytes), a type
 * widened into a union, a field renamed with an alias, removed, or added with a default.
 */
import { describe, expect, it } from 'vitest';
import { incompatibleFields } from '../../../lib/schema-registry.js';

const record = (...fields: unknown[]) =>
  JSON.stringify({ type: 'record', name: 'SeatHeld', namespace: 'com.stagefront.events', fields });
const seat = { name: 'seat_id', type: 'string' };
const timestamp = { type: 'long', logicalType: 'timestamp-millis' };

describe('incompatibleFields', () => {
  const compatible: [string, string, string][] = [
    ['the same schema', record(seat), record(seat)],
    ['int → long', record({ name: 'n', type: 'int' }), record({ name: 'n', type: 'long' })],
    ['int → double', record({ name: 'n', type: 'int' }), record({ name: 'n', type: 'double' })],
    ['long → float', record({ name: 'n', type: 'long' }), record({ name: 'n', type: 'float' })],
    ['float → double', record({ name: 'n', type: 'float' }), record({ name: 'n', type: 'double' })],
    ['string → bytes', record({ name: 's', type: 'string' }), record({ name: 's', type: 'bytes' })],
    ['bytes → string', record({ name: 's', type: 'bytes' }), record({ name: 's', type: 'string' })],
    ['int → a union with long', record({ name: 'n', type: 'int' }), record({ name: 'n', type: ['null', 'long'] })],
    ['a logical type kept', record({ name: 't', type: timestamp }), record({ name: 't', type: timestamp })],
    ['a field removed', record(seat, { name: 'note', type: 'string' }), record(seat)],
    ['a field added with a default', record(seat), record(seat, { name: 'note', type: 'string', default: '' })],
    [
      'a field renamed with an alias',
      record({ name: 'old_name', type: 'string' }),
      record({ name: 'new_name', aliases: ['old_name'], type: 'string' }),
    ],
    [
      'an enum symbol added',
      record({ name: 'e', type: { type: 'enum', name: 'Kind', symbols: ['A'] } }),
      record({ name: 'e', type: { type: 'enum', name: 'Kind', symbols: ['A', 'B'] } }),
    ],
  ];
  it.each(compatible)('reads the older data: %s', (_case, previous, next) => {
    expect(incompatibleFields(previous, next)).toEqual([]);
  });

  const incompatible: [string, string, string, string[]][] = [
    [
      'a field added without a default',
      record(seat),
      record(seat, { name: 'price_cents', type: 'int' }),
      ['field "price_cents" was added without a default'],
    ],
    [
      'string → int',
      record({ name: 'note', type: 'string' }),
      record({ name: 'note', type: 'int' }),
      ['field "note" changed type from "string" to "int"'],
    ],
    [
      'long → int (narrowing)',
      record({ name: 'n', type: 'long' }),
      record({ name: 'n', type: 'int' }),
      ['field "n" changed type from "long" to "int"'],
    ],
    [
      'an enum symbol removed',
      record({ name: 'e', type: { type: 'enum', name: 'Kind', symbols: ['A', 'B'] } }),
      record({ name: 'e', type: { type: 'enum', name: 'Kind', symbols: ['A'] } }),
      [
        'field "e" changed type from {"type":"enum","name":"Kind","symbols":["A","B"]} to {"type":"enum","name":"Kind","symbols":["A"]}',
      ],
    ],
    [
      'two fields at once',
      record(seat, { name: 'n', type: 'double' }),
      record({ name: 'seat_id', type: 'int' }, { name: 'n', type: 'long' }, { name: 'x', type: 'string' }),
      [
        'field "seat_id" changed type from "string" to "int"',
        'field "n" changed type from "double" to "long"',
        'field "x" was added without a default',
      ],
    ],
  ];
  it.each(incompatible)('names what breaks: %s', (_case, previous, next, problems) => {
    expect(incompatibleFields(previous, next)).toEqual(problems);
  });
});
