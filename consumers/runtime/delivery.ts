/** A record with its decoded event, and the facts about a record the retry logic needs. */
import { headerValue, REDRIVEN_AT_HEADER } from './headers.js';
import type { ConsumedEvent, SourceRecord } from './types.js';

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
