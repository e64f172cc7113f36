/**
 * The stack's Kafka users and their ACLs: the access plan (lib/kafka-access.ts) of this project's
 * programs, from their own definitions: each consumer's default group and the topics its
 * definition reads, the catalogue's aggregates, the stack's Connect cluster.
 */
import { confirmationEmailSettings, confirmationEmailTopics } from '../consumers/confirmation-email/consumer.js';
import { salesLedgerConsumer, salesLedgerSettings } from '../consumers/sales-ledger/consumer.js';
import { seatAvailabilityConsumer, seatAvailabilitySettings } from '../consumers/seat-availability/consumer.js';
import { type AggregateType, EVENTS } from '../events/catalogue.js';
import { type KafkaAccessInput, type KafkaConsumerAccessInput, type KafkaUserAccess, kafkaAccessPlan } from '../lib/kafka-access.js';
import { type ConnectCluster, STACK_CONNECT_CLUSTER } from './connect.js';

/** Each consumer program under its default group id, which is also its name and Kafka user. */
export function programConsumers(topicPrefix: string): KafkaConsumerAccessInput[] {
  const seat = seatAvailabilitySettings.settings.groupId.default;
  const ledger = salesLedgerSettings.settings.groupId.default;
  const email = confirmationEmailSettings.settings.groupId.default;
  return [
    { name: seat, groupId: seat, topics: seatAvailabilityConsumer(seat, topicPrefix).topics },
    { name: email, groupId: email, topics: confirmationEmailTopics(topicPrefix) },
    { name: ledger, groupId: ledger, topics: salesLedgerConsumer(ledger, topicPrefix).topics },
  ];
}

export function catalogueAggregates(): AggregateType[] {
  return [...new Set(Object.values(EVENTS).map((e) => e.aggregateType))];
}

export function stackKafkaAccessInput(topicPrefix: string, connect: ConnectCluster = STACK_CONNECT_CLUSTER): KafkaAccessInput {
  return { topicPrefix, consumers: programConsumers(topicPrefix), connect: { groupId: connect.groupId, storageTopicPrefix: connect.storageTopicPrefix }, aggregates: catalogueAggregates() };
}

/** The plan of the stack's programs (Kubernetes renders the same into KafkaUsers). */
export function stackKafkaAccessPlan(topicPrefix: string, connect: ConnectCluster = STACK_CONNECT_CLUSTER): KafkaUserAccess[] {
  return kafkaAccessPlan(stackKafkaAccessInput(topicPrefix, connect));
}
