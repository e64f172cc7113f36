/**
 * The stack's Kafka users and their ACLs: the access plan (lib/kafka-access.ts) of this project's
 * programs, from their own definitions: each consumer's default group and the topics its
 * definition reads, the catalogue's aggregates, the stack's Connect cluster.
 */
import { connectorSettings } from '../connectors/settings.js';
import { confirmationEmailSettings, confirmationEmailTopics } from '../consumers/confirmation-email/consumer.js';
import { salesLedgerConsumer, salesLedgerSettings } from '../consumers/sales-ledger/consumer.js';
import { seatAvailabilityConsumer, seatAvailabilitySettings } from '../consumers/seat-availability/consumer.js';
import { type AggregateType, EVENTS } from '../events/catalogue.js';
import {
  KAFKA_ADMIN_USER,
  KAFKA_CONNECT_USER,
  KAFKA_CONNECTOR_COMMAND_USER,
  KAFKA_REDRIVE_USER,
  type KafkaAccessInput,
  type KafkaConsumerAccessInput,
  type KafkaUserAccess,
  kafkaAccessPlan,
} from '../lib/kafka-access.js';
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

/** The topic prefix of the stack's programs (TOPIC_PREFIX's default): the ACLs the stack creates name its topics. */
export const STACK_TOPIC_PREFIX = connectorSettings.settings.topicPrefix.default;

export function stackKafkaAccessInput(
  topicPrefix: string = STACK_TOPIC_PREFIX,
  connect: ConnectCluster = STACK_CONNECT_CLUSTER,
): KafkaAccessInput {
  return {
    topicPrefix,
    consumers: programConsumers(topicPrefix),
    connect: { groupId: connect.groupId, storageTopicPrefix: connect.storageTopicPrefix },
    aggregates: catalogueAggregates(),
  };
}

/** The plan of the stack's programs (Kubernetes renders the same into KafkaUsers). */
export function stackKafkaAccessPlan(
  topicPrefix: string = STACK_TOPIC_PREFIX,
  connect: ConnectCluster = STACK_CONNECT_CLUSTER,
): KafkaUserAccess[] {
  return kafkaAccessPlan(stackKafkaAccessInput(topicPrefix, connect));
}

/**
 * Passwords of the stack's Kafka users on the local stack only (loopback, throwaway data), like
 * LOCAL_ROLE_PASSWORDS: the SCRAM credentials made at format time, Connect's worker, the stack's
 * own checks and each program's environment (localKafkaClientEnv) take them from here.
 */
export const LOCAL_KAFKA_PASSWORDS: Readonly<Record<string, string>> = {
  [KAFKA_ADMIN_USER]: 'stagefront-kafka-admin',
  [KAFKA_CONNECT_USER]: 'stagefront-kafka-connect',
  [KAFKA_REDRIVE_USER]: 'stagefront-kafka-redrive',
  [KAFKA_CONNECTOR_COMMAND_USER]: 'stagefront-kafka-connector-command',
  'seat-availability': 'stagefront-kafka-seat-availability',
  'confirmation-email': 'stagefront-kafka-confirmation-email',
  'sales-ledger': 'stagefront-kafka-sales-ledger',
};

export function localKafkaPassword(user: string): string {
  const password = LOCAL_KAFKA_PASSWORDS[user];
  if (password === undefined)
    throw new Error(
      `no local password for Kafka user ${JSON.stringify(user)}: add it to LOCAL_KAFKA_PASSWORDS (stack/kafka-users.ts) beside its entry in the access plan`,
    );
  return password;
}
