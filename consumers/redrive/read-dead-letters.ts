/**
 * Reads what sits in a dead letter topic right now: every record up to the high watermarks seen
 * at the start, through a throwaway consumer group that is deleted afterwards.
 */
import { randomUUID } from 'node:crypto';
import { deadLetterReaderGroupPrefix } from '../../lib/kafka-access.js';
import type { Admin, Kafka } from '../../lib/kafka.js';
import { waitFor } from '../../lib/wait.js';
import { headerValue } from '../runtime/headers.js';
import type { SourceRecord } from '../runtime/types.js';

export interface DeadLetter extends SourceRecord {
  reason: string;
  /** The consumer that gave up on it (dlq_consumer); the others of the topic may have handled it. */
  consumer: string | undefined;
  error: string;
  ceId: string | undefined;
  sourceTopic: string | undefined;
  sourcePartition: number | undefined;
  sourceOffset: string | undefined;
  deadLetteredAt: string | undefined;
  attempts: number | undefined;
}

function toDeadLetter(record: SourceRecord): DeadLetter {
  const h = (name: string): string | undefined => headerValue(record.headers, name);
  const numberOf = (text: string | undefined): number | undefined => (text === undefined ? undefined : Number(text));
  return {
    ...record,
    reason: h('dlq_reason') ?? '(no dlq_reason header)',
    consumer: h('dlq_consumer'),
    error: h('dlq_error') ?? '',
    ceId: h('ce_id'),
    sourceTopic: h('dlq_source_topic'),
    sourcePartition: numberOf(h('dlq_source_partition')),
    sourceOffset: h('dlq_source_offset'),
    deadLetteredAt: h('dlq_dead_lettered_at'),
    attempts: numberOf(h('dlq_attempts')),
  };
}

/** Offset of the last record per partition now (partitions with no records left out). */
async function lastOffsets(admin: Admin, topic: string): Promise<Map<number, bigint>> {
  const offsets = await admin.fetchTopicOffsets(topic);
  const last = new Map<number, bigint>();
  for (const { partition, high, low } of offsets) {
    if (BigInt(high) > BigInt(low)) last.set(partition, BigInt(high) - 1n);
  }
  return last;
}

/** Every record of `topic` present when called, in partition and offset order. */
export async function readTopicRecords(
  kafka: Kafka,
  topic: string,
  options: { timeoutMs?: number } = {},
): Promise<SourceRecord[]> {
  const admin = kafka.admin();
  await admin.connect();
  const groupId = `${deadLetterReaderGroupPrefix(topic)}${randomUUID()}`;
  // A short fetch wait: the read is done once every partition's last record came, and disconnect
  // waits for the fetch in flight, which at kafkajs's default of 5 s made every read cost 5 s.
  const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false, maxWaitTimeInMs: 100 });
  try {
    const last = await lastOffsets(admin, topic);
    if (last.size === 0) return [];
    const records: SourceRecord[] = [];
    const reached = new Set<number>();
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        const end = last.get(partition);
        if (end === undefined || BigInt(message.offset) > end) return;
        records.push({
          topic,
          partition,
          offset: message.offset,
          key: message.key,
          value: message.value,
          headers: message.headers ?? {},
          timestamp: message.timestamp,
        });
        if (BigInt(message.offset) === end) reached.add(partition);
      },
    });
    await waitFor(() => reached.size === last.size, {
      timeoutMs: options.timeoutMs ?? 30_000,
      description: `reading ${topic} to its end`,
    });
    return records.sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)));
  } finally {
    await consumer.disconnect();
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
}

export async function readDeadLetters(kafka: Kafka, deadLetterTopic: string): Promise<DeadLetter[]> {
  return (await readTopicRecords(kafka, deadLetterTopic)).map(toDeadLetter);
}
