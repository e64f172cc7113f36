/**
 * Parsers for settings tables: each turns the text of an environment variable
 * into a typed value with zod, and says in words what it expects, with an example,
 * so a bad value can be reported as one sentence with the fix.
 */
import { z } from 'zod';

export interface SettingParser<T> {
  /** Validates and converts the (string) value of the environment variable. */
  schema: z.ZodType<T>;
  /** Completes "expected …": "a whole number of milliseconds". */
  expected: string;
  /** A valid value to suggest in error messages and in .env.example. */
  example: string;
}

const WHOLE_NUMBER = /^[+-]?\d+$/;

function rangeWords(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`;
  if (min !== undefined) return ` of at least ${min}`;
  if (max !== undefined) return ` of at most ${max}`;
  return '';
}

function wholeNumber(min: number | undefined, max: number | undefined): z.ZodType<number> {
  let checked = z.number().int();
  if (min !== undefined) checked = checked.min(min);
  if (max !== undefined) checked = checked.max(max);
  return z.string().trim().regex(WHOLE_NUMBER).transform(Number).pipe(checked);
}

export function zInt(options: { min?: number; max?: number; example?: string } = {}): SettingParser<number> {
  const { min, max } = options;
  return {
    schema: wholeNumber(min, max),
    expected: `a whole number${rangeWords(min, max)}`,
    example: options.example ?? String(min ?? 1),
  };
}

/** A TCP port; 0 lets the system pick a free one. */
export function zPort(): SettingParser<number> {
  return {
    schema: wholeNumber(0, 65_535),
    expected: 'a TCP port from 0 to 65535 (0 picks a free port)',
    example: '9464',
  };
}

export function zDurationMs(options: { min?: number; max?: number; example?: string } = {}): SettingParser<number> {
  const { min = 0, max } = options;
  return {
    schema: wholeNumber(min, max),
    expected: `a whole number of milliseconds${min === 0 && max === undefined ? '' : rangeWords(min, max)}`,
    example: options.example ?? '5000',
  };
}

/** true/false, 1/0, yes/no, in any case. */
export function zBool(): SettingParser<boolean> {
  const schema = z
    .string()
    .trim()
    .pipe(z.stringbool({ truthy: ['true', '1', 'yes'], falsy: ['false', '0', 'no'], case: 'insensitive' }));
  return { schema, expected: 'true or false (also 1/0, yes/no)', example: 'true' };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A URL; `protocols` restricts the scheme, e.g. ['postgres', 'postgresql']. */
export function zUrl(options: { protocols?: readonly string[]; example?: string } = {}): SettingParser<string> {
  const protocols = options.protocols ?? [];
  const protocol = new RegExp(`^(?:${protocols.map(escapeRegExp).join('|')})$`);
  const schema = z
    .string()
    .trim()
    .pipe(protocols.length === 0 ? z.url() : z.url({ protocol }));
  return {
    schema,
    expected: protocols.length === 0 ? 'a URL' : `a URL starting with ${protocols.map((p) => `${p}://`).join(' or ')}`,
    example: options.example ?? `${protocols[0] ?? 'http'}://127.0.0.1:8080`,
  };
}

/** Comma separated values, trimmed, empty entries dropped: "a:9092, b:9092" → ['a:9092', 'b:9092']. */
export function zList(options: { minItems?: number; example?: string } = {}): SettingParser<string[]> {
  const { minItems = 0 } = options;
  const schema = z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== ''),
    )
    .pipe(z.array(z.string()).min(minItems));
  const count = minItems > 1 ? ` (at least ${minItems})` : minItems === 1 ? ' (at least one)' : '';
  return { schema, expected: `a comma separated list${count}`, example: options.example ?? 'a,b' };
}

export function zString(
  options: { minLength?: number; pattern?: RegExp; expected?: string; example?: string } = {},
): SettingParser<string> {
  const { minLength = 0, pattern } = options;
  let schema = z.string().min(minLength);
  if (pattern) schema = schema.regex(pattern);
  return {
    schema,
    expected: options.expected ?? (minLength > 0 ? 'a non-empty text' : 'any text'),
    example: options.example ?? 'text',
  };
}

export function zEnum<const T extends readonly [string, ...string[]]>(values: T): SettingParser<T[number]> {
  return {
    schema: z.string().trim().pipe(z.enum(values)),
    expected: `one of ${values.join(', ')}`,
    example: values[0],
  };
}

const BYTE_UNITS: Readonly<Record<string, number>> = {
  B: 1,
  kB: 1024,
  MB: 1024 ** 2,
  GB: 1024 ** 3,
  TB: 1024 ** 4,
};

const SIZE_PATTERN = /^(\d+(?:\.\d+)?)\s*(B|kB|MB|GB|TB)$/;

/**
 * Parses a size the way Postgres writes it (`SHOW max_slot_wal_keep_size`): `10GB`,
 * `512MB`, `1024kB`, `8B`, units case-sensitive as in Postgres, 1 kB = 1024 B.
 * `-1` (unlimited) gives -1 and `0` gives 0. A bare number is refused because
 * Postgres reads it in the setting's own unit (MB for WAL sizes), not in bytes.
 * Returns undefined when the text is not a size.
 */
export function parseBytes(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '-1') return -1;
  if (trimmed === '0') return 0;
  const match = SIZE_PATTERN.exec(trimmed);
  if (!match) return undefined;
  const [, amount = '', unit = ''] = match;
  const multiplier = BYTE_UNITS[unit];
  if (multiplier === undefined) return undefined;
  const bytes = Math.round(Number(amount) * multiplier);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** A Postgres-style size (see parseBytes) in bytes, or -1 for unlimited. */
export function zBytes(options: { example?: string } = {}): SettingParser<number> {
  const schema = z
    .string()
    .refine((text) => parseBytes(text) !== undefined)
    .transform((text) => parseBytes(text) ?? Number.NaN);
  return {
    schema,
    expected: 'a size with a unit (B, kB, MB, GB, TB, as Postgres writes it) or -1 for unlimited',
    example: options.example ?? '10GB',
  };
}
