/** A record with its decoded event, and the deadline facts the retry logic needs. */
import { eventTypeSpec } from './cloud-event.js';
import { headerValue, REDRIVEN_AT_HEADER } from './headers.js';
import type { ConsumedEvent, ConsumerDefinition, DeliveryPolicy, LatePolicy, SourceRecord } from './types.js';

/** `event` is undefined when the record's type is not one this consumer handles. */
export interface Delivery {
  record: SourceRecord;
  event: ConsumedEvent | undefined;
}

function finiteTimes(...values: (number | undefined)[]): number[] {
  return values.filter((value): value is number => value !== undefined && Number.isFinite(value));
}

/**
 * When the event's deadline starts: its ce_time (or the Kafka timestamp when ce_time is
 * unreadable), or the moment a redrive put it back, whichever is later.
 */
export function deadlineStartMs(record: SourceRecord): number {
  const ceTime = Date.parse(headerValue(record.headers, 'ce_time') ?? '');
  const redrivenAt = Date.parse(headerValue(record.headers, REDRIVEN_AT_HEADER) ?? '');
  const produced = Number.isFinite(ceTime) ? ceTime : Number(record.timestamp);
  return Math.max(...finiteTimes(produced, redrivenAt), 0);
}

/**
 * Whether an event comes already past its deadline under the `dead-letter` policy (a provider
 * down for hours, a backlog, a recovery's re-emit): it is dead-lettered as `deadline exceeded`
 * instead of performed, for a person to decide on (a redrive gives it a deadline of its own).
 */
export function expiredOnArrival(
  definition: ConsumerDefinition,
  policy: DeliveryPolicy,
  record: SourceRecord,
  now = Date.now(),
): boolean {
  const spec = eventTypeSpec(definition.eventTypes, headerValue(record.headers, 'ce_type') ?? '');
  if (spec?.whenLate !== 'dead-letter') return false;
  return now >= deadlineStartMs(record) + (spec.deadlineMs ?? policy.deadlineMs);
}

export interface Lateness {
  /** Age of the oldest event held by the failure (from ce_time). */
  oldestAgeMs: number;
  /** Some event is past its deadline: the alert fires. */
  pastDeadline: boolean;
  /** Some event whose policy is `dead-letter` is past its deadline and its late retry window. */
  deadLetterNow: boolean;
  /** Until the next of those moments (Infinity when none lies ahead): a retry wait never sleeps past it. */
  msUntilNextChange: number;
}

/**
 * How late the failing deliveries are. An event's policy applies past its deadline, but never
 * before `lateRetryWindowMs` after the failure was first seen: an old event (a backlog, a
 * recovery's re-emit) gets a short retry window of its own, so one deadlock cannot dead-letter it.
 * Records of types this consumer does not decode have no deadline of their own: keep retrying.
 */
export function latenessOf(
  definition: ConsumerDefinition,
  policy: DeliveryPolicy,
  records: readonly SourceRecord[],
  failingSinceMs: number,
  now = Date.now(),
): Lateness {
  const lateness: Lateness = { oldestAgeMs: 0, pastDeadline: false, deadLetterNow: false, msUntilNextChange: Infinity };
  for (const record of records) {
    const spec = eventTypeSpec(definition.eventTypes, headerValue(record.headers, 'ce_type') ?? '');
    const start = deadlineStartMs(record);
    const deadline = start + (spec?.deadlineMs ?? policy.deadlineMs);
    const whenLate: LatePolicy = spec?.whenLate ?? 'keep-retrying';
    const policyAt = Math.max(deadline, failingSinceMs + policy.lateRetryWindowMs);
    lateness.oldestAgeMs = Math.max(lateness.oldestAgeMs, now - start);
    if (now >= deadline) lateness.pastDeadline = true;
    else lateness.msUntilNextChange = Math.min(lateness.msUntilNextChange, deadline - now);
    if (whenLate !== 'dead-letter') continue;
    if (now >= policyAt) lateness.deadLetterNow = true;
    else lateness.msUntilNextChange = Math.min(lateness.msUntilNextChange, policyAt - now);
  }
  return lateness;
}

/** The ids on-call needs to follow one record through the logs. */
export function recordIds(record: SourceRecord, consumer: string): Record<string, unknown> {
  return {
    ce_id: headerValue(record.headers, 'ce_id'),
    ce_type: headerValue(record.headers, 'ce_type'),
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    consumer,
  };
}
