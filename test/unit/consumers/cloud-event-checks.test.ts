/**
 * Hostile headers: a ce_type that names an inherited member of a plain object, a repeated
 * attribute header, and the attributes the contract fixes (specversion, id, source).
 */
import { describe, expect, it } from 'vitest';
import { decodeCloudEvent, parseCloudEvent } from '../../../consumers/runtime/cloud-event.js';
import { isUriReference } from '../../../consumers/runtime/cloud-event-checks.js';
import { latenessOf } from '../../../consumers/runtime/delivery.js';
import { PoisonError } from '../../../consumers/runtime/failures.js';
import { headerValue, headersAsStrings } from '../../../consumers/runtime/headers.js';
import type { ConsumerDefinition, DeliveryPolicy, SourceRecord } from '../../../consumers/runtime/types.js';
import type { IHeaders } from '../../../lib/kafka.js';
import { createSchemaRegistry } from '../../../lib/schema-registry.js';

const ID = '0190b3a4-5c6d-7e8f-9a0b-1c2d3e4f5a6b';

function headers(overrides: Record<string, IHeaders[string] | null> = {}): IHeaders {
  const base: Record<string, IHeaders[string] | null> = {
    id: ID,
    ce_id: ID,
    ce_type: 'com.stagefront.seat.held',
    ce_source: '/stagefront/seat-service',
    ce_specversion: '1.0',
    ce_time: '2026-12-01T10:00:00.000Z',
    ce_subject: 's:A-1-1',
    'content-type': 'application/avro',
  };
  const merged = { ...base, ...overrides };
  return Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== null)) as IHeaders;
}

function record(h: IHeaders, value: Buffer = Buffer.from([0, 0, 0, 0, 1, 2])): SourceRecord {
  return { topic: 't', partition: 0, offset: '7', key: Buffer.from('s:A-1-1'), value, headers: h, timestamp: '0' };
}

function notACloudEvent(h: IHeaders): string {
  try {
    parseCloudEvent(record(h));
  } catch (err) {
    expect(err).toBeInstanceOf(PoisonError);
    expect((err as PoisonError).reason).toBe('not a cloudevent');
    return (err as Error).message;
  }
  throw new Error('the record parsed');
}

describe('a ce_type that names an inherited member of a plain object', () => {
  // Never called: a type the consumer does not handle is skipped before the registry is asked.
  const registry = createSchemaRegistry('http://127.0.0.1:9/apis/ccompat/v7');
  const eventTypes = { 'com.stagefront.seat.held': { whenLate: 'keep-retrying' as const, parse: (p: unknown) => p } };

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])(
    '%s is a type the consumer does not handle: skipped, not poison',
    async (type) => {
      await expect(decodeCloudEvent(registry, record(headers({ ce_type: type })), eventTypes)).resolves.toBeUndefined();
    },
  );

  it("has no deadline of its own in latenessOf: the consumer's applies", () => {
    const definition = { name: 'c', topics: ['t'], eventTypes } as unknown as ConsumerDefinition;
    const policy: DeliveryPolicy = {
      deadlineMs: 60_000,
      lateRetryWindowMs: 5_000,
      deliveryLimit: 3,
      retryBaseMs: 50,
      retryCapMs: 500,
    };
    const now = Date.parse('2026-12-01T10:00:30.000Z');
    const unknown = latenessOf(definition, policy, [record(headers({ ce_type: 'com.example.unknown' }))], now, now);
    for (const type of ['constructor', '__proto__', 'toString']) {
      expect(latenessOf(definition, policy, [record(headers({ ce_type: type }))], now, now)).toEqual(unknown);
    }
  });

  it('reads headers as own properties only', () => {
    expect(headerValue(headers(), 'constructor')).toBeUndefined();
    expect(headerValue(headers(), 'toString')).toBeUndefined();
    const strings = headersAsStrings({ ...headers(), ['__proto__']: Buffer.from('x') });
    expect(Object.getPrototypeOf(strings)).toBe(Object.prototype);
  });
});

describe('a repeated attribute header is ambiguous: poison, naming the header', () => {
  it.each(['ce_type', 'ce_id', 'ce_time', 'content-type'])('%s twice', (name) => {
    const h = headers();
    const value = h[name] as string;
    const message = notACloudEvent({
      ...h,
      [name]: [Buffer.from(value), Buffer.from(value === ID ? '0190b3a4-5c6d-7e8f-9a0b-000000000000' : `${value}x`)],
    });
    expect(message).toContain(`header ${name} appears 2 times`);
  });

  it('the same value twice is refused too, and a repeated header that is not an attribute is not', () => {
    expect(notACloudEvent({ ...headers(), ce_type: [Buffer.from('a.b'), Buffer.from('a.b')] })).toContain(
      'header ce_type appears 2 times',
    );
    expect(parseCloudEvent(record({ ...headers(), traceparent_x: [Buffer.from('a'), Buffer.from('b')] })).type).toBe(
      'com.stagefront.seat.held',
    );
  });
});

describe('the attributes the contract fixes', () => {
  it("accepts the seat service's record", () => {
    const event = parseCloudEvent(record(headers()));
    expect([event.id, event.specversion, event.source]).toEqual([ID, '1.0', '/stagefront/seat-service']);
  });

  it('ce_specversion must be 1.0', () => {
    expect(notACloudEvent(headers({ ce_specversion: '0.3' }))).toContain('ce_specversion is "0.3", not 1.0');
    expect(notACloudEvent(headers({ ce_specversion: null }))).toContain('ce_specversion is missing');
  });

  it.each(['not-a-uuid', ID.toUpperCase(), `${ID}0`, '', '{0190b3a4-5c6d-7e8f-9a0b-1c2d3e4f5a6b}'])(
    'ce_id %j is not the outbox id',
    (id) => {
      const message = notACloudEvent(headers({ ce_id: id }));
      expect(message).toMatch(id === '' ? /ce_id/ : /ce_id .* is not the outbox id/);
    },
  );

  it.each(['', 'has spaces', 'http://[bad', '1http://x', 'a\u001b[2Jb'])(
    'ce_source %j is not a non-empty URI-reference',
    (source) => {
      expect(notACloudEvent(headers({ ce_source: source }))).toMatch(
        /ce_source (is missing or empty|.* is not a URI-reference|must match format "uri-reference")/,
      );
    },
  );

  it('a bad ce_time is named by its header', () => {
    expect(notACloudEvent(headers({ ce_time: 'yesterday' }))).toContain(
      'ce_time "yesterday" is not an RFC 3339 timestamp',
    );
    expect(notACloudEvent(headers({ ce_time: '2026-13-45T99:00:00Z' }))).toContain('is not an RFC 3339 timestamp');
    expect(parseCloudEvent(record(headers({ ce_time: '2026-12-01T10:00:00.123456Z' }))).time).toBeDefined();
  });

  it('knows a URI-reference', () => {
    for (const good of [
      '/stagefront/seat-service',
      'urn:stagefront:seat',
      'https://example.test/a?b=c#d',
      'relative/path',
      '//host/x',
      'a%20b',
    ])
      expect(isUriReference(good), good).toBe(true);
    for (const bad of ['has spaces', '%zz', 'é', '1abc:x', ':x']) expect(isUriReference(bad), bad).toBe(false);
  });
});
