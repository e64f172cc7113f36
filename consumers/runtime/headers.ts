/** Kafka headers as kafkajs hands them over (Buffers, maybe repeated) turned into plain strings. */
import type { IHeaders } from '../../lib/kafka.js';

function headerText(value: IHeaders[string] | null): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  // Kafka allows a header without a value (kafkajs gives null): the Outbox Event Router writes one
  // for a null column, e.g. ce_dataschema of rows written before that column existed. Absent.
  if (first === undefined || first === null) return undefined;
  return typeof first === 'string' ? first : first.toString('utf8');
}

/**
 * Every header as a UTF-8 string (the first value of a repeated header: parseCloudEvent refuses a
 * record whose attribute headers repeat). Own properties only, so a header named `__proto__` is a
 * header like any other.
 */
export function headersAsStrings(headers: IHeaders | undefined): Record<string, string> {
  const strings: [string, string][] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    const text = headerText(value);
    if (text !== undefined) strings.push([name, text]);
  }
  return Object.fromEntries(strings);
}

export function headerValue(headers: IHeaders | undefined, name: string): string | undefined {
  return headers !== undefined && Object.hasOwn(headers, name) ? headerText(headers[name]) : undefined;
}

/** Header added by redrive: the deadline of a redriven event counts from here, not from ce_time. */
export const REDRIVEN_AT_HEADER = 'redriven_at';
/** Prefix of the headers a dead letter adds; redrive strips them. */
export const DEAD_LETTER_HEADER_PREFIX = 'dlq_';
