/**
 * The baseline: a naive idempotent consumer, one consumer-database transaction per message
 * (inbox row + effect), kafkajs eachMessage with its default offset commits.
 */
import { decodeCloudEvent } from '../consumers/runtime/cloud-event.js';
import { firstOccurrences, insertInboxRows } from '../consumers/runtime/inbox.js';
import type { ConsumerDefinition } from '../consumers/runtime/types.js';
import type { Kafka } from '../lib/kafka.js';
import { type Pool, withTransaction } from '../lib/postgres.js';
import type { Registry } from '../lib/schema-registry.js';

export interface NaiveConsumer {
  /** Resolves when the consumer has joined its group. */
  joined: Promise<void>;
  stop(): Promise<void>;
}

export async function startNaiveConsumer(options: { kafka: Kafka; groupId: string; registry: Registry; pool: Pool; definition: ConsumerDefinition; partitionsConsumedConcurrently: number }): Promise<NaiveConsumer> {
  const { definition, pool, registry } = options;
  if (definition.effects.kind !== 'transactional') throw new Error('the naive consumer only runs transactional effects');
  const { apply } = definition.effects;
  const consumer = options.kafka.consumer({ groupId: options.groupId, allowAutoTopicCreation: false });
  const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
  await consumer.connect();
  await consumer.subscribe({ topics: [...definition.topics], fromBeginning: true });
  await consumer.run({
    partitionsConsumedConcurrently: options.partitionsConsumedConcurrently,
    eachMessage: async ({ topic, partition, message }) => {
      const record = { topic, partition, offset: message.offset, key: message.key, value: message.value, headers: message.headers ?? {}, timestamp: message.timestamp };
      const event = await decodeCloudEvent(registry, record, definition.eventTypes);
      if (event === undefined) return;
      await withTransaction(pool, async (client) => {
        const fresh = firstOccurrences([event], await insertInboxRows(client, definition.name, [event]));
        if (fresh.length > 0) await apply(client, fresh);
      });
    },
  });
  return { joined, stop: () => consumer.disconnect() };
}
