import { describe, expect, it } from 'vitest';
import { parseBytes, zBool, zBytes, zInt, zList, zPort, zUrl } from '../../../lib/settings.js';

describe('parseBytes', () => {
  it.each([
    ['10GB', 10 * 1024 ** 3],
    ['512MB', 512 * 1024 ** 2],
    ['1024kB', 1024 * 1024],
    ['1TB', 1024 ** 4],
    ['8B', 8],
    ['1.5GB', 1.5 * 1024 ** 3],
    [' 64 MB ', 64 * 1024 ** 2],
    ['-1', -1],
    ['0', 0],
  ])('reads %j as %d bytes', (text, bytes) => {
    expect(parseBytes(text)).toBe(bytes);
  });

  it.each(['10gb', '10KB', '10', '-2', 'abc', '', 'GB', '10 XB', '1e3MB', '-5MB', '99999999999TB'])(
    'refuses %j',
    (text) => {
      expect(parseBytes(text)).toBeUndefined();
    },
  );

  it('backs the zBytes setting parser', () => {
    expect(zBytes().schema.safeParse('512MB')).toEqual({ success: true, data: 512 * 1024 ** 2 });
    expect(zBytes().schema.safeParse('512').success).toBe(false);
  });
});

describe('setting parsers', () => {
  it('zBool accepts true/false, 1/0, yes/no in any case and nothing else', () => {
    const { schema } = zBool();
    for (const text of ['true', 'TRUE', '1', 'yes', 'Yes']) expect(schema.parse(text)).toBe(true);
    for (const text of ['false', 'False', '0', 'no', 'NO']) expect(schema.parse(text)).toBe(false);
    for (const text of ['y', 'on', '2', '']) expect(schema.safeParse(text).success).toBe(false);
  });

  it('zInt accepts whole numbers within its range only', () => {
    const { schema, expected } = zInt({ min: 1, max: 10 });
    expect(schema.parse('10')).toBe(10);
    for (const text of ['0', '11', '1.5', '1e1', 'ten', '']) expect(schema.safeParse(text).success).toBe(false);
    expect(expected).toBe('a whole number from 1 to 10');
  });

  it('zPort accepts 0 to 65535', () => {
    expect(zPort().schema.parse('0')).toBe(0);
    expect(zPort().schema.parse('65535')).toBe(65_535);
    expect(zPort().schema.safeParse('65536').success).toBe(false);
  });

  it('zUrl checks the scheme when told to', () => {
    const { schema } = zUrl({ protocols: ['postgres', 'postgresql'] });
    expect(schema.parse('postgresql://u@h/db')).toBe('postgresql://u@h/db');
    expect(schema.safeParse('http://h/db').success).toBe(false);
    expect(schema.safeParse('not a url').success).toBe(false);
  });

  it('zList splits on commas and can require items', () => {
    expect(zList().schema.parse('')).toEqual([]);
    expect(zList({ minItems: 1 }).schema.safeParse('').success).toBe(false);
    expect(zList().schema.parse(' a ,b,, c')).toEqual(['a', 'b', 'c']);
  });
});
