/**
 * The walk that bounds an Avro body before avsc decodes it: every hostile shape stops with the
 * right error before anything is allocated, and everything the catalogue writes passes.
 */
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { EVENTS, type EventName, readEventSchema } from '../../../events/catalogue.js';
import { AvroBoundsError, avroBoundsChecker } from '../../../consumers/runtime/avro-bounds.js';
import { DEFAULT_DECODE_LIMITS } from '../../../consumers/runtime/decode-limits.js';

const LIMITS = DEFAULT_DECODE_LIMITS;

/** Zig-zag varints, as Avro writes counts, lengths and indexes. */
function long(n: number): Buffer {
  return avro.Type.forSchema('long').toBuffer(n);
}

function bytesOf(...parts: (Buffer | number[])[]): Buffer {
  return Buffer.concat(parts.map((part) => (Buffer.isBuffer(part) ? part : Buffer.from(part))));
}

function check(schema: avro.Schema, body: Buffer, limits = LIMITS): void {
  avroBoundsChecker(avro.Type.forSchema(schema))(body, limits);
}

function refusal(schema: avro.Schema, body: Buffer, limits = LIMITS): string {
  try {
    check(schema, body, limits);
  } catch (err) {
    expect(err).toBeInstanceOf(AvroBoundsError);
    return (err as Error).message;
  }
  throw new Error('the body passed the bounds check');
}

const arrayOf = (items: avro.Schema): avro.Schema => ({ type: 'array', items });
const mapOf = (values: avro.Schema): avro.Schema => ({ type: 'map', values });
const emptyRecord: avro.Schema = { type: 'record', name: 'Nothing', fields: [] };
/** A linked list: each level is a union branch 1 and one more record inside. */
const nest: avro.Schema = { type: 'record', name: 'Nest', fields: [{ name: 'inner', type: ['null', 'Nest'] }] };

function nested(levels: number): Buffer {
  return bytesOf(Buffer.alloc(levels - 1, 0x02), [0x00]);
}

const CATALOGUE_PAYLOADS: Record<EventName, unknown> = {
  seatHeld: {
    seat_id: 'stadium-20261201:A-12-30',
    show_id: 'stadium-20261201',
    section: 'A',
    hold_id: 'h-1',
    buyer_id: 'b-1',
    held_at: 1_796_000_000_000,
    expires_at: 1_796_000_600_000,
  },
  seatReleased: {
    seat_id: 'stadium-20261201:A-12-30',
    show_id: 'stadium-20261201',
    section: 'A',
    hold_id: 'h-1',
    released_at: 1_796_000_100_000,
  },
  seatHoldExpired: {
    seat_id: 'stadium-20261201:A-12-30',
    show_id: 'stadium-20261201',
    section: 'A',
    hold_id: 'h-1',
    expired_at: 1_796_000_600_000,
  },
  seatSold: {
    seat_id: 'stadium-20261201:A-12-30',
    show_id: 'stadium-20261201',
    section: 'A',
    order_id: 'o-1',
    price_cents: 12_900,
    sold_at: 1_796_000_200_000,
  },
  orderConfirmed: {
    order_id: 'o-1',
    show_id: 'stadium-20261201',
    hold_id: 'h-1',
    buyer_id: 'b-1',
    buyer_email: 'buyer@example.com',
    seat_ids: ['stadium-20261201:A-12-30', 'stadium-20261201:A-12-31'],
    total_cents: 25_800,
    currency: 'EUR',
    confirmed_at: 1_796_000_200_000,
  },
};

describe('Avro bounds: what the catalogue writes', () => {
  for (const name of Object.keys(EVENTS) as EventName[]) {
    const type = avro.Type.forSchema(JSON.parse(readEventSchema(name)) as avro.Schema);
    const checker = avroBoundsChecker(type);

    it(`passes a ${name} payload and every random value of its schema`, () => {
      expect(() => checker(type.toBuffer(CATALOGUE_PAYLOADS[name]), LIMITS)).not.toThrow();
      for (let i = 0; i < 200; i += 1) expect(() => checker(type.toBuffer(type.random()), LIMITS)).not.toThrow();
    });

    it(`refuses every truncation of a ${name} body`, () => {
      const body = type.toBuffer(CATALOGUE_PAYLOADS[name]);
      for (let end = 0; end < body.length; end += 1) {
        expect(() => checker(body.subarray(0, end), LIMITS), `cut at ${end}`).toThrow(/truncated or corrupt/);
      }
    });
  }

  it('passes an order of as many seats as the collection limit, and each seat id of the string limit', () => {
    const type = avro.Type.forSchema(JSON.parse(readEventSchema('orderConfirmed')) as avro.Schema);
    const many = {
      ...(CATALOGUE_PAYLOADS.orderConfirmed as object),
      seat_ids: Array.from({ length: LIMITS.maxCollectionItems }, (_, i) => `s:${i}`),
    };
    expect(() => avroBoundsChecker(type)(type.toBuffer(many), LIMITS)).not.toThrow();
    const long = { ...(CATALOGUE_PAYLOADS.orderConfirmed as object), seat_ids: ['x'.repeat(LIMITS.maxStringBytes)] };
    expect(() => avroBoundsChecker(type)(type.toBuffer(long), LIMITS)).not.toThrow();
  });

  it('passes every kind of Avro type a schema may hold', () => {
    const every: avro.Schema = {
      type: 'record',
      name: 'Every',
      fields: [
        { name: 'n', type: 'null' },
        { name: 'b', type: 'boolean' },
        { name: 'i', type: 'int' },
        { name: 'l', type: 'long' },
        { name: 'f', type: 'float' },
        { name: 'd', type: 'double' },
        { name: 'by', type: 'bytes' },
        { name: 's', type: 'string' },
        { name: 'fx', type: { type: 'fixed', name: 'Sixteen', size: 16 } },
        { name: 'e', type: { type: 'enum', name: 'Colour', symbols: ['RED', 'GREEN'] } },
        { name: 'a', type: arrayOf(mapOf(['null', 'string', emptyRecord])) },
        { name: 'ts', type: { type: 'long', logicalType: 'timestamp-millis' } },
        { name: 'nest', type: ['null', nest] },
      ],
    };
    const type = avro.Type.forSchema(every);
    for (let i = 0; i < 300; i += 1)
      expect(() => avroBoundsChecker(type)(type.toBuffer(type.random()), LIMITS)).not.toThrow();
  });
});

describe('Avro bounds: hostile bodies', () => {
  it('refuses an array that declares 2^40 items, naming the limit and its setting', () => {
    expect(refusal(arrayOf('string'), long(2 ** 40))).toBe(
      'the Avro value declares an array of 1099511627776 items, over the limit of 131072 (CONSUMER_MAX_COLLECTION_ITEMS)',
    );
  });

  it('refuses a map that declares 2^30 entries', () => {
    expect(refusal(mapOf('long'), long(2 ** 30))).toMatch(
      /declares a map of 1073741824 entries, over the limit of 131072 \(CONSUMER_MAX_COLLECTION_ITEMS\)/,
    );
  });

  it('refuses a block with a negative count: by its count, and by a byte size larger than the bytes left', () => {
    expect(refusal(arrayOf('string'), bytesOf(long(-(2 ** 40)), long(2 ** 50)))).toMatch(
      /declares an array of 1099511627776 items, over the limit/,
    );
    expect(
      refusal(arrayOf('string'), bytesOf(long(-2), long(2 ** 40), long(1), [0x61], long(1), [0x62], long(0))),
    ).toMatch(/truncated or corrupt: an array block declared as 1099511627776 bytes/);
    expect(refusal(mapOf('null'), bytesOf(long(-1), long(-4)))).toMatch(
      /corrupt: it declares a map block of -4 bytes at byte 1/,
    );
    // A well-formed negative block (count -2, 4 bytes) passes.
    expect(() =>
      check(arrayOf('string'), bytesOf(long(-2), long(4), long(1), [0x61], long(1), [0x62], long(0))),
    ).not.toThrow();
  });

  it('refuses a negative-count block whose items do not take exactly its declared size (a reader that skips the block would read other bytes)', () => {
    // A resolver that drops `skipme` jumps over the block by its declared size (3 bytes here), and would then
    // read the bytes the walk took for the block's one item as the start of `b`: an array of 2^31 nulls.
    const writer: avro.Schema = {
      type: 'record',
      name: 'Drift',
      fields: [
        { name: 'skipme', type: arrayOf('bytes') },
        { name: 'b', type: arrayOf('null') },
      ],
    };
    const hidden = bytesOf([0x00], long(2 ** 31), [0x00]);
    const body = bytesOf(long(-1), long(1), long(hidden.length), hidden, [0x00], [0x00]);
    expect(refusal(writer, body)).toMatch(/corrupt: its array block at byte 0 declares 1 bytes, its items take \d+/);
    // The same shape with a size that matches its items passes.
    expect(() => check(writer, bytesOf(long(-1), long(1), long(0), [0x00], [0x00]))).not.toThrow();
  });

  it('adds up the blocks of one collection, and the collections of one value', () => {
    const limits = { ...LIMITS, maxCollectionItems: 10 };
    expect(refusal(arrayOf('null'), bytesOf(long(6), long(6), long(0)), limits)).toMatch(
      /declares an array of at least 12 items, over the limit of 10/,
    );
    // Nested arrays of nothing: each inner one under the limit, together over it (they would multiply).
    const inner = bytesOf(long(4), long(0));
    expect(refusal(arrayOf(arrayOf('null')), bytesOf(long(3), inner, inner, inner, long(0)), limits)).toMatch(
      /declares 11 array items and map entries in all, over the limit of 10 \(CONSUMER_MAX_COLLECTION_ITEMS\)/,
    );
  });

  it('refuses an array whose items could not fit in the bytes left', () => {
    expect(refusal(arrayOf('string'), bytesOf(long(5_000), Buffer.alloc(10)))).toMatch(
      /truncated or corrupt: an array of 5000 items \(1 bytes or more each\)/,
    );
    expect(refusal(arrayOf('double'), bytesOf(long(3), Buffer.alloc(16)))).toMatch(
      /an array of 3 items \(8 bytes or more each\) at byte 0 needs 24 bytes, 16 remain/,
    );
  });

  it('caps arrays of items that take no bytes (null, an empty record) by the collection limit alone', () => {
    for (const items of ['null', emptyRecord] as avro.Schema[]) {
      expect(refusal(arrayOf(items), bytesOf(long(2 ** 40), long(0)))).toMatch(
        /declares an array of 1099511627776 items, over the limit of 131072/,
      );
      const atLimit = bytesOf(long(LIMITS.maxCollectionItems), long(0));
      expect(() => check(arrayOf(items), atLimit)).not.toThrow();
      expect(avro.Type.forSchema(arrayOf(items)).fromBuffer(atLimit)).toHaveLength(LIMITS.maxCollectionItems);
    }
  });

  it('refuses a string or bytes length over the limit, or longer than the bytes left, or negative', () => {
    expect(refusal('string', long(5 * 2 ** 30))).toBe(
      'the Avro value declares a string of 5368709120 bytes, over the limit of 65536 (CONSUMER_MAX_STRING_BYTES)',
    );
    expect(refusal('bytes', long(2 ** 40))).toBe(
      'the Avro value declares a bytes value of 1099511627776 bytes, over the limit of 65536 (CONSUMER_MAX_STRING_BYTES)',
    );
    expect(refusal(mapOf('null'), bytesOf(long(1), long(2 ** 33)))).toMatch(
      /declares a string of 8589934592 bytes, over the limit/,
    );
    expect(refusal('string', bytesOf(long(100), Buffer.from('short')))).toMatch(
      /truncated or corrupt: a string at byte 0 needs 100 bytes, 5 remain/,
    );
    expect(refusal('bytes', long(-3))).toMatch(/corrupt: it declares a bytes value of -3 bytes/);
  });

  it('refuses a recursive value nested deeper than the limit, and passes one at the limit', () => {
    expect(() => check(nest, nested(LIMITS.maxNestingDepth))).not.toThrow();
    expect(refusal(nest, nested(LIMITS.maxNestingDepth + 1))).toMatch(
      /nests records, arrays and maps more than 32 levels deep, over the limit of 32 \(CONSUMER_MAX_NESTING_DEPTH\)/,
    );
    // A million levels (what a 1 MiB record can hold) stops at the limit, long before the stack runs out.
    expect(refusal(nest, nested(1_000_000))).toMatch(/more than 32 levels deep/);
    expect(
      refusal(arrayOf(arrayOf(arrayOf('null'))), bytesOf(long(1), long(1), long(1), long(0), long(0), long(0)), {
        ...LIMITS,
        maxNestingDepth: 2,
      }),
    ).toMatch(/more than 2 levels deep, over the limit of 2/);
  });

  it('refuses a union branch or an enum symbol out of range', () => {
    expect(refusal(['null', 'string'], long(7))).toMatch(
      /corrupt: it chooses branch 7 of a union of 2 branches at byte 0/,
    );
    expect(refusal(['null', 'string'], long(-1))).toMatch(/chooses branch -1 of a union of 2 branches/);
    expect(refusal({ type: 'enum', name: 'E', symbols: ['A', 'B', 'C'] }, long(3))).toMatch(
      /chooses symbol 3 of an enum of 3 symbols/,
    );
  });

  it('refuses a fixed value, a double or a number cut short, and a number longer than 10 bytes', () => {
    expect(refusal({ type: 'fixed', name: 'F', size: 16 }, Buffer.alloc(15))).toMatch(
      /a fixed-size value at byte 0 needs 16 bytes, 15 remain/,
    );
    expect(refusal('double', Buffer.alloc(7))).toMatch(/truncated or corrupt/);
    expect(refusal('long', Buffer.from([0x80, 0x80]))).toMatch(/truncated or corrupt: a number/);
    expect(refusal('long', Buffer.alloc(11, 0xff))).toMatch(/the number at byte 0 is longer than 10 bytes/);
    expect(refusal(arrayOf('int'), Buffer.alloc(11, 0xff))).toMatch(/the number at byte 0 is longer than 10 bytes/);
  });

  it('uses the limits it is given, naming the same settings', () => {
    expect(
      refusal(arrayOf('int'), bytesOf(long(3), long(1), long(2), long(3), long(0)), {
        ...LIMITS,
        maxCollectionItems: 2,
      }),
    ).toMatch(/an array of 3 items, over the limit of 2 \(CONSUMER_MAX_COLLECTION_ITEMS\)/);
    expect(refusal('string', bytesOf(long(300), Buffer.alloc(300)), { ...LIMITS, maxStringBytes: 256 })).toMatch(
      /over the limit of 256 \(CONSUMER_MAX_STRING_BYTES\)/,
    );
  });
});
