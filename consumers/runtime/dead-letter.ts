/**
 * Dead letters: the original key, headers and bytes, plus `dlq_*` headers saying why, when,
 * where from and after how many attempts. One dead letter topic per source topic.
 */
import { deadLetterTopicFor } from '../../events/catalogue.js';
import type { IHeaders, Producer } from '../../lib/kafka.js';
import { DEAD_LETTER_HEADER_PREFIX } from './headers.js';
import type { DeadLetterReason } from './failures.js';
import type { ProcessingContext } from './context.js';
import { deadlineStartMs, recordIds } from './delivery.js';
import type { ConsumedEvent, SourceRecord } from './types.js';

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
  await sendDeadLetters(producer, record.topic, [{ record, facts }]);
}

/** Writes the dead letters of records of one source topic in one request (acks from all in-sync replicas). */
async function sendDeadLetters(
  producer: Producer,
  sourceTopic: string,
  letters: readonly { record: SourceRecord; facts: DeadLetterFacts }[],
): Promise<void> {
  if (letters.length === 0) return;
  await producer.send({
    topic: deadLetterTopicFor(sourceTopic),
    acks: -1,
    messages: letters.map(({ record, facts }) => ({
      key: record.key,
      value: record.value,
      headers: deadLetterHeaders(record, facts),
    })),
  });
}

/**
 * Events that came past their `dead-letter` deadline, never claimed or performed: dead-lettered as
 * `deadline exceeded`, in one request, before the group's offsets are committed (a failure fails
 * the group, which comes again: a second dead letter of an event is harmless, a redrive deduplicated).
 */
export async function deadLetterExpired(ctx: ProcessingContext, topic: string, expired: readonly ConsumedEvent[]) {
  const consumer = ctx.definition.name;
  const now = new Date();
  const error = (event: ConsumedEvent) =>
    `came ${Math.round((now.getTime() - deadlineStartMs(event.record)) / 60_000)} min after its ce_time (or its redrive), past its deadline: never sent; redrive it if it should still be`;
  await sendDeadLetters(
    ctx.producer,
    topic,
    expired.map((event) => ({
      record: event.record,
      facts: { reason: 'deadline exceeded', error: error(event), firstFailureAt: now, attempts: 0, consumer },
    })),
  );
  for (const event of expired) {
    ctx.logger.error(
      { ...recordIds(event.record, consumer), reason: 'deadline exceeded' },
      'dead-lettered: came past its deadline',
    );
    ctx.events.emit('deadLettered', { topic, partition: event.record.partition, reason: 'deadline exceeded' });
  }
}
