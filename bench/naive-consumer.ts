/**
 * The baseline: a naive idempotent consumer, one consumer-database transaction per message
 * (inbox row + effect), kafkajs eachMessage with its default offset commits. For external effects
 * (email) it claims, performs and stamps one message at a time.
 */
import { decodeCloudEvent } from '../consumers/runtime/cloud-event.js';
import {
  claimForExternalEffects,
  firstOccurrences,
  insertInboxRows,
  markEffectsSent,
} from '../consumers/runtime/inbox.js';
import type { ConsumedEvent, ConsumerDefinition } from '../consumers/runtime/types.js';
import type { Kafka } from '../lib/kafka.js';
import { type Pool, withTransaction } from '../lib/postgres.js';
import type { Registry } from '../lib/schema-registry.js';

export interface NaiveConsumer {
  /** Resolves when the consumer has joined its group. */
  joined: Promise<void>;
  stop(): Promise<void>;
}

export interface NaiveConsumerOptions {
  kafka: Kafka;
  groupId: string;
  registry: Registry;
  pool: Pool;
  definition: ConsumerDefinition;
  partitionsConsumedConcurrently: number;
  /** Default: the beginning. */
  fromBeginning?: boolean;
  /** Called when an event's effect has committed (or the email was accepted). */
  onApplied?: (event: ConsumedEvent) => void;
}

export async function startNaiveConsumer(options: NaiveConsumerOptions): Promise<NaiveConsumer> {
  const { definition, pool, registry } = options;
  const { effects } = definition;
  const handle = async (event: ConsumedEvent): Promise<void> => {
    if (effects.kind === 'transactional') {
      await withTransaction(pool, async (client) => {
        const fresh = firstOccurrences([event], await insertInboxRows(client, definition.name, [event]));
        if (fresh.length > 0) await effects.apply(client, fresh);
      });
    } else {
      const claims = await claimForExternalEffects(
        pool,
        definition.name,
        [event],
        effects.claimAbandonedAfterMs,
        `naive-${options.groupId}`,
      );
      if (claims.get(event.id) !== 'claimed') return;
      await effects.perform(event);
      await markEffectsSent(pool, definition.name, [event.id]);
    }
    options.onApplied?.(event);
  };
  const consumer = options.kafka.consumer({ groupId: options.groupId, allowAutoTopicCreation: false });
  const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
  await consumer.connect();
  await consumer.subscribe({ topics: [...definition.topics], fromBeginning: options.fromBeginning ?? true });
  await consumer.run({
    partitionsConsumedConcurrently: options.partitionsConsumedConcurrently,
    eachMessage: async ({ topic, partition, message }) => {
      const record = {
        topic,
        partition,
        offset: message.offset,
        key: message.key,
        value: message.value,
        headers: message.headers ?? {},
        timestamp: message.timestamp,
      };
      const event = await decodeCloudEvent(registry, record, definition.eventTypes);
      if (event !== undefined) await handle(event);
    },
  });
  return { joined, stop: () => consumer.disconnect() };
}
