/** Which events come already past their deadline: only under the `dead-letter` policy, by ce_time or a later redrive. */
import { describe, expect, it } from 'vitest';
import { catalogueEventTypes } from '../../../consumers/payloads.js';
import { expiredOnArrival } from '../../../consumers/runtime/delivery.js';
import { REDRIVEN_AT_HEADER } from '../../../consumers/runtime/headers.js';
import type { ConsumerDefinition, DeliveryPolicy, SourceRecord } from '../../../consumers/runtime/types.js';
import { EVENTS } from '../../../events/catalogue.js';

const policy: DeliveryPolicy = {
  deadlineMs: 1_800_000,
  lateRetryWindowMs: 60_000,
  deliveryLimit: 5,
  retryBaseMs: 200,
  retryCapMs: 60_000,
};

function consumer(whenLate: 'dead-letter' | 'keep-retrying'): ConsumerDefinition {
  return {
    name: 'c',
    topics: ['t'],
    eventTypes: catalogueEventTypes(['orderConfirmed'], whenLate),
  } as unknown as ConsumerDefinition;
}

function order(ceTime: string, redrivenAt?: string): SourceRecord {
  return {
    topic: 't',
    partition: 0,
    offset: '1',
    key: null,
    value: null,
    timestamp: '0',
    headers: {
      ce_type: EVENTS.orderConfirmed.type,
      ce_time: ceTime,
      ...(redrivenAt === undefined ? {} : { [REDRIVEN_AT_HEADER]: redrivenAt }),
    },
  };
}

const now = Date.parse('2026-12-07T10:00:00.000Z');

describe('an event that comes past its deadline', () => {
  it('is expired under the dead-letter policy from its deadline on, not a moment before', () => {
    expect(expiredOnArrival(consumer('dead-letter'), policy, order('2026-12-07T09:30:00.001Z'), now)).toBe(false);
    expect(expiredOnArrival(consumer('dead-letter'), policy, order('2026-12-07T09:30:00.000Z'), now)).toBe(true);
    expect(expiredOnArrival(consumer('dead-letter'), policy, order('2026-12-07T04:00:00.000Z'), now)).toBe(true);
  });

  it('is never expired under keep-retrying (its effect is right however late)', () => {
    expect(expiredOnArrival(consumer('keep-retrying'), policy, order('2026-12-07T04:00:00.000Z'), now)).toBe(false);
  });

  it('gets a deadline of its own from a redrive', () => {
    const redriven = order('2026-12-07T04:00:00.000Z', '2026-12-07T09:55:00.000Z');
    expect(expiredOnArrival(consumer('dead-letter'), policy, redriven, now)).toBe(false);
  });

  it('is not expired when it is not a type the consumer handles', () => {
    const other = {
      ...order('2026-12-07T04:00:00.000Z'),
      headers: { ce_type: 'com.example.other', ce_time: '2026-12-07T04:00:00.000Z' },
    };
    expect(expiredOnArrival(consumer('dead-letter'), policy, other, now)).toBe(false);
  });
});
