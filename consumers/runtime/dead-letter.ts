/**
 * Dead letters: the original key, headers and bytes, plus `dlq_*` headers saying why, when,
 * where from and after how many attempts. One dead letter topic per source topic.
 */
import { deadLetterTopicFor } from '../../events/catalogue.js';
import type { IHeaders, Producer } from '../../lib/kafka.js';
import { DEAD_LETTER_HEADER_PREFIX } from './headers.js';
import type { DeadLetterReason } from './failures.js';
import type { SourceRecord } from './types.js';

export interface DeadLetterFacts {
  reason: DeadLetterReason;
  error: string;
  firstFailureAt: Date;
  attempts: number;
  consumer: string;
}

/** The longest error text kept in a header. */
const MAX_ERROR_LENGTH = 2_000;

/** The original headers without earlier dlq_* headers (a record dead-lettered again after a redrive). */
export function withoutDeadLetterHeaders(headers: IHeaders): IHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith(DEAD_LETTER_HEADER_PREFIX)));
}

export function deadLetterHeaders(record: SourceRecord, facts: DeadLetterFacts): IHeaders {
  return {
    ...withoutDeadLetterHeaders(record.headers),
    dlq_reason: facts.reason,
    dlq_error: facts.error.slice(0, MAX_ERROR_LENGTH),
    dlq_first_failure_at: facts.firstFailureAt.toISOString(),
    dlq_dead_lettered_at: new Date().toISOString(),
    dlq_attempts: String(facts.attempts),
    dlq_source_topic: record.topic,
    dlq_source_partition: String(record.partition),
    dlq_source_offset: record.offset,
    dlq_consumer: facts.consumer,
  };
}

/** Writes the dead letter (acks from all in-sync replicas) and resolves once Kafka has it. */
export async function sendToDeadLetterTopic(
  producer: Producer,
  record: SourceRecord,
  facts: DeadLetterFacts,
): Promise<void> {
  await producer.send({
    topic: deadLetterTopicFor(record.topic),
    acks: -1,
    messages: [{ key: record.key, value: record.value, headers: deadLetterHeaders(record, facts) }],
  });
}
