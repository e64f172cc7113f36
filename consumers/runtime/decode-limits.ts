/**
 * How much of a record the consumer agrees to decode (docs/design-decisions.md, "Decoding is
 * bounded before it allocates"). The record and its headers are measured before the CloudEvents SDK reads
 * them; the Avro body is walked against the writer's schema (avro-bounds.ts) before avsc decodes
 * it. A record over a limit is poison ("undecodable"), named with the limit and its setting.
 */
import type { IHeaders } from '../../lib/kafka.js';
import { PoisonError } from './failures.js';
import type { SourceRecord } from './types.js';

export interface DecodeLimits {
  /** Bytes of a record's key and value together. */
  maxRecordBytes: number;
  /** Headers of one record (each value of a repeated header counts). */
  maxHeaders: number;
  /** Bytes of a record's header names and values together. */
  maxHeaderBytes: number;
  /** Array items and map entries in one Avro value, all its collections together. */
  maxCollectionItems: number;
  /** Bytes of one Avro string or bytes value (a map key is a string). */
  maxStringBytes: number;
  /** Records, arrays and maps nested in one another; the event's own record is level 1. */
  maxNestingDepth: number;
}

/** The consumer settings that raise each limit (consumers/runtime/settings.ts uses these names). */
export const DECODE_LIMIT_ENV: Readonly<Record<keyof DecodeLimits, string>> = {
  maxRecordBytes: 'CONSUMER_MAX_RECORD_BYTES',
  maxHeaders: 'CONSUMER_MAX_HEADERS',
  maxHeaderBytes: 'CONSUMER_MAX_HEADER_BYTES',
  maxCollectionItems: 'CONSUMER_MAX_COLLECTION_ITEMS',
  maxStringBytes: 'CONSUMER_MAX_STRING_BYTES',
  maxNestingDepth: 'CONSUMER_MAX_NESTING_DEPTH',
};

/**
 * What a caller that passes no limits gets; the settings' defaults are these. Each is far above
 * what the event catalogue writes (the reasons are in the settings' descriptions).
 */
export const DEFAULT_DECODE_LIMITS: Readonly<DecodeLimits> = {
  maxRecordBytes: 1_048_576,
  maxHeaders: 64,
  maxHeaderBytes: 16_384,
  maxCollectionItems: 131_072,
  maxStringBytes: 65_536,
  maxNestingDepth: 32,
};

/** "…, over the limit of 10000 (CONSUMER_MAX_COLLECTION_ITEMS)": the sentence tail that names the fix. */
export function overLimit<K extends keyof DecodeLimits>(limits: Pick<DecodeLimits, K>, name: K): string {
  return `over the limit of ${limits[name]} (${DECODE_LIMIT_ENV[name]})`;
}

type HeaderValue = Buffer | string | null | undefined;

function valueBytes(value: HeaderValue): number {
  if (value === undefined || value === null) return 0;
  return typeof value === 'string' ? Buffer.byteLength(value) : value.length;
}

function headerMeasure(headers: IHeaders): { count: number; bytes: number } {
  let count = 0;
  let bytes = 0;
  for (const name in headers) {
    const value = headers[name] as HeaderValue | HeaderValue[];
    const nameBytes = Buffer.byteLength(name);
    if (!Array.isArray(value)) {
      count += 1;
      bytes += nameBytes + valueBytes(value);
      continue;
    }
    for (const one of value) {
      count += 1;
      bytes += nameBytes + valueBytes(one);
    }
  }
  return { count, bytes };
}

/** Throws PoisonError "undecodable" when the record or its headers are over a limit; reads nothing else. */
export function checkRecordBounds(record: SourceRecord, limits: DecodeLimits): void {
  const recordBytes = (record.key?.length ?? 0) + (record.value?.length ?? 0);
  if (recordBytes > limits.maxRecordBytes) {
    throw new PoisonError(
      'undecodable',
      `the record's key and value have ${recordBytes} bytes, ${overLimit(limits, 'maxRecordBytes')}`,
    );
  }
  const { count, bytes } = headerMeasure(record.headers);
  if (count > limits.maxHeaders) {
    throw new PoisonError('undecodable', `the record has ${count} headers, ${overLimit(limits, 'maxHeaders')}`);
  }
  if (bytes > limits.maxHeaderBytes) {
    throw new PoisonError(
      'undecodable',
      `the record's headers have ${bytes} bytes (names and values), ${overLimit(limits, 'maxHeaderBytes')}`,
    );
  }
}

/** The limits a caller passed, the defaults for the rest. */
export function decodeLimitsWith(overrides: Partial<DecodeLimits> = {}): DecodeLimits {
  return { ...DEFAULT_DECODE_LIMITS, ...overrides };
}
