/**
 * What the event contract (docs/event-contract.md) promises about a record's CloudEvent headers
 * and the cloudevents SDK does not check: each attribute header once, `ce_specversion` exactly
 * `1.0`, `ce_id` the outbox id (a uuid in its canonical lower-case text, which the inbox
 * deduplicates on), `ce_source` a non-empty URI-reference, `ce_time` an RFC 3339 timestamp. A record that breaks one is poison,
 * "not a cloudevent", with the header named.
 */
import type { IHeaders } from '../../lib/kafka.js';

/** The headers that carry CloudEvent attributes in Kafka binary mode. */
function isAttributeHeader(name: string): boolean {
  return name.startsWith('ce_') || name === 'content-type';
}

/** ce_id's form: a uuid as Postgres writes it (the inbox deduplicates on this text). */
export const CE_ID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
const CANONICAL_UUID = new RegExp(CE_ID_PATTERN);

/** The checks below in words (CommonMark), for the event contract (docs/event-contract.md, the AsyncAPI document). */
export const ATTRIBUTE_RULES =
  "Each `ce_*` header and `content-type` appears once. A consumer on this project's runtime dead-letters as `not a cloudevent` " +
  '(the header named in `dlq_error`) a record whose `ce_*` or `content-type` header repeats, whose `ce_specversion` is not `1.0`, ' +
  'whose `ce_id` is not a uuid in lower-case canonical form, whose `ce_source` is not a non-empty URI-reference (RFC 3986), ' +
  'or whose `ce_time` is missing or not an RFC 3339 timestamp.';

/** RFC 3986 URI-reference: its characters, and a scheme (when there is one) of letters, digits, + - . */
const URI_REFERENCE_CHARACTERS = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#[\]]|%[0-9A-Fa-f]{2})+$/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;
const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export function isUriReference(text: string): boolean {
  if (!URI_REFERENCE_CHARACTERS.test(text)) return false;
  const colon = text.indexOf(':');
  const firstDelimiter = text.search(/[/?#]/);
  // A colon before any '/', '?' or '#' ends a scheme, which must be well formed.
  if (colon !== -1 && (firstDelimiter === -1 || colon < firstDelimiter)) return SCHEME.test(text.slice(0, colon));
  return true;
}

/** Attribute headers that appear more than once: ambiguous, since readers disagree on which value counts. */
function repeatedAttributeHeaders(headers: IHeaders): string[] {
  return Object.entries(headers)
    .filter(([name, value]) => isAttributeHeader(name) && Array.isArray(value) && value.length > 1)
    .map(([name, value]) => `header ${name} appears ${(value as unknown[]).length} times`);
}

/**
 * Why the record's headers break the contract, or undefined when they keep it. `strings` are the
 * headers as text (headersAsStrings); `raw` as kafkajs handed them over, to see repeats.
 */
export function attributeProblem(raw: IHeaders, strings: Readonly<Record<string, string>>): string | undefined {
  const repeated = repeatedAttributeHeaders(raw);
  if (repeated.length > 0) {
    return `${repeated.join(', ')}: a CloudEvent attribute must appear once, or readers disagree on its value (one reads the first, another the last); fix the producer`;
  }
  const get = (name: string): string | undefined => (Object.hasOwn(strings, name) ? strings[name] : undefined);
  const specversion = get('ce_specversion');
  if (specversion !== '1.0')
    return specversion === undefined
      ? 'ce_specversion is missing (it must be 1.0)'
      : `ce_specversion is ${JSON.stringify(specversion)}, not 1.0 (the only version this contract speaks)`;
  const id = get('ce_id');
  if (id === undefined) return 'ce_id is missing';
  if (!CANONICAL_UUID.test(id))
    return `ce_id ${JSON.stringify(id.slice(0, 80))} is not the outbox id (a uuid in lower-case canonical form, 8-4-4-4-12 hex digits)`;
  const source = get('ce_source');
  if (source === undefined || source === '')
    return 'ce_source is missing or empty (it must be a non-empty URI-reference)';
  if (!isUriReference(source))
    return `ce_source ${JSON.stringify(source.slice(0, 80))} is not a URI-reference (RFC 3986)`;
  const time = get('ce_time');
  if (time === undefined) return 'ce_time is missing';
  if (!RFC_3339.test(time) || !Number.isFinite(Date.parse(time)))
    return `ce_time ${JSON.stringify(time.slice(0, 80))} is not an RFC 3339 timestamp`;
  return undefined;
}
