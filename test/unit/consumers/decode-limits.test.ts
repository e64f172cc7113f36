/**
 * The record and header limits, checked before the CloudEvents SDK reads a record, and the
 * settings that carry every decode limit to the runtime.
 */
import { describe, expect, it } from 'vitest';
import { EVENTS } from '../../../events/catalogue.js';
import { parseSettings } from '../../../lib/settings.js';
import { createSchemaRegistry } from '../../../lib/schema-registry.js';
import { decodeCloudEvent } from '../../../consumers/runtime/cloud-event.js';
import {
  DECODE_LIMIT_ENV,
  DEFAULT_DECODE_LIMITS,
  checkRecordBounds,
  decodeLimitsWith,
} from '../../../consumers/runtime/decode-limits.js';
import { PoisonError } from '../../../consumers/runtime/failures.js';
import { decodeLimitsOf } from '../../../consumers/runtime/settings.js';
import type { SourceRecord } from '../../../consumers/runtime/types.js';
import { seatAvailabilitySettings } from '../../../consumers/seat-availability/consumer.js';
import { confirmationEmailSettings } from '../../../consumers/confirmation-email/consumer.js';
import { salesLedgerSettings } from '../../../consumers/sales-ledger/consumer.js';
import { routerHeaders } from '../../support/cloudevent-records.js';

const ID = '0193a3c0-0000-7000-8000-000000000001';
const SEAT = 'stadium-20261201:A-12-30';

function record(overrides: Partial<SourceRecord> = {}): SourceRecord {
  const headers = Object.fromEntries(
    Object.entries(
      // A catalogue event's 10 headers, as the router writes them.
      routerHeaders({
        id: ID,
        type: EVENTS.seatHeld.type,
        key: SEAT,
        time: '2026-12-01T10:00:00.000Z',
        dataschema: 'http://127.0.0.1:18081/apis/ccompat/v7/schemas/ids/1',
      }),
    ).map(([name, value]) => [name, Buffer.from(String(value))]),
  );
  return {
    topic: 'stagefront.seat',
    partition: 0,
    offset: '7',
    key: Buffer.from(SEAT),
    value: Buffer.alloc(120),
    headers,
    timestamp: '0',
    ...overrides,
  };
}

function refusal(source: SourceRecord, limits = DEFAULT_DECODE_LIMITS): PoisonError {
  try {
    checkRecordBounds(source, limits);
  } catch (err) {
    expect(err).toBeInstanceOf(PoisonError);
    return err as PoisonError;
  }
  throw new Error('the record passed the bounds check');
}

describe('record and header limits', () => {
  it('pass a record as the outbox router writes it', () => {
    expect(() => checkRecordBounds(record(), DEFAULT_DECODE_LIMITS)).not.toThrow();
  });

  it('refuse a record whose key and value are over the record limit', () => {
    const err = refusal(record({ value: Buffer.alloc(DEFAULT_DECODE_LIMITS.maxRecordBytes - SEAT.length + 1) }));
    expect(err.reason).toBe('undecodable');
    expect(err.message).toBe(
      "the record's key and value have 1048577 bytes, over the limit of 1048576 (CONSUMER_MAX_RECORD_BYTES)",
    );
    expect(() =>
      checkRecordBounds(
        record({ value: Buffer.alloc(DEFAULT_DECODE_LIMITS.maxRecordBytes - SEAT.length) }),
        DEFAULT_DECODE_LIMITS,
      ),
    ).not.toThrow();
  });

  it('refuse too many headers, each value of a repeated header counted', () => {
    const many = { ...record().headers, ...Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`x-${i}`, 'v'])) };
    expect(refusal(record({ headers: many })).message).toBe(
      'the record has 70 headers, over the limit of 64 (CONSUMER_MAX_HEADERS)',
    );
    const repeated = { ...record().headers, 'x-repeated': Array.from({ length: 55 }, () => Buffer.from('v')) };
    expect(refusal(record({ headers: repeated })).message).toMatch(/the record has 65 headers, over the limit of 64/);
  });

  it('refuse headers whose names and values are over the header bytes limit, counted in UTF-8 bytes', () => {
    const huge = { ...record().headers, 'x-huge': Buffer.alloc(20_000) };
    expect(refusal(record({ headers: huge })).message).toMatch(
      /the record's headers have \d+ bytes \(names and values\), over the limit of 16384 \(CONSUMER_MAX_HEADER_BYTES\)/,
    );
    const wide = { 'x-wide': 'é'.repeat(600) }; // 600 characters, 1200 bytes
    expect(refusal(record({ headers: wide }), { ...DEFAULT_DECODE_LIMITS, maxHeaderBytes: 1_200 }).message).toMatch(
      /have 1206 bytes/,
    );
  });

  it('are checked before the CloudEvents SDK or the registry see the record', async () => {
    const registry = createSchemaRegistry('http://127.0.0.1:9/never-asked');
    const notEvenACloudEvent = record({ headers: { 'x-huge': Buffer.alloc(20_000) } });
    await expect(decodeCloudEvent(registry, notEvenACloudEvent, {})).rejects.toThrow(/CONSUMER_MAX_HEADER_BYTES/);
    await expect(
      decodeCloudEvent(registry, notEvenACloudEvent, {}, { ...DEFAULT_DECODE_LIMITS, maxHeaderBytes: 30_000 }),
    ).rejects.toThrow(/not a CloudEvent/);
  });
});

describe('decode limit settings', () => {
  const env = { CONSUMER_DATABASE_URL: 'postgres://consumers:secret@127.0.0.1:54329/stagefront_consumers' };

  it('every consumer program has them, defaulting to the runtime defaults', () => {
    for (const def of [seatAvailabilitySettings, confirmationEmailSettings, salesLedgerSettings]) {
      expect(decodeLimitsOf(parseSettings(def, env)), def.program).toEqual(DEFAULT_DECODE_LIMITS);
    }
  });

  it('each is raised by the setting its refusal names', () => {
    const raised = {
      maxRecordBytes: 4_194_304,
      maxHeaders: 128,
      maxHeaderBytes: 65_536,
      maxCollectionItems: 500_000,
      maxStringBytes: 1_048_576,
      maxNestingDepth: 64,
    };
    const variables = Object.fromEntries(
      Object.entries(raised).map(([name, value]) => [DECODE_LIMIT_ENV[name as keyof typeof raised], String(value)]),
    );
    const config = parseSettings(seatAvailabilitySettings, { ...env, ...variables });
    expect(decodeLimitsOf(config)).toEqual(raised); // what runConsumerProgram hands startConsumer
  });

  it('a caller of startConsumer that passes some limits gets the defaults for the rest', () => {
    expect(decodeLimitsWith({ maxHeaders: 10 })).toEqual({ ...DEFAULT_DECODE_LIMITS, maxHeaders: 10 });
    expect(decodeLimitsWith()).toEqual(DEFAULT_DECODE_LIMITS);
  });
});
