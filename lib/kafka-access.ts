/**
 * Who may do what on Kafka: the one access plan. Each program has a Kafka user of its own, and the
 * plan lists, per user, the ACLs that allow its job and nothing else (every ACL allows; what no ACL
 * allows is refused, the brokers running with allow.everyone.if.no.acl.found=false). The native
 * stack creates these ACLs at start (stack/kafka.ts) and Kubernetes renders them into Strimzi
 * KafkaUsers: the vocabulary below is Strimzi's `spec.authorization.acls` (resource type, name,
 * patternType literal|prefix; operations by their Kafka names), so either maps it one to one.
 *
 * Pure: topic names come from the event catalogue's topicFor and deadLetterTopicFor, consumers and
 * the Connect cluster from the caller (the stack's come from their definitions, stack/kafka-users.ts).
 */
import { type AggregateType, deadLetterTopicFor, topicFor } from '../events/catalogue.js';

export type KafkaResourceType = 'topic' | 'group' | 'cluster' | 'transactionalId';

/** literal: exactly that name; prefix: every name that starts with it. */
type KafkaPatternType = 'literal' | 'prefix';

export const KAFKA_OPERATIONS = [
  'Read',
  'Write',
  'Create',
  'Delete',
  'Alter',
  'Describe',
  'ClusterAction',
  'DescribeConfigs',
  'AlterConfigs',
  'IdempotentWrite',
] as const;
export type KafkaOperation = (typeof KAFKA_OPERATIONS)[number];

/** A resource as Strimzi writes it; the cluster resource has no name (Kafka calls it `kafka-cluster`). */
interface KafkaAclResource {
  type: KafkaResourceType;
  /** Absent for the cluster. */
  name?: string;
  patternType: KafkaPatternType;
}

/** One allow rule: the user may perform `operations` on `resource`, from any host. */
export interface KafkaAcl {
  resource: KafkaAclResource;
  operations: KafkaOperation[];
}

export interface KafkaUserAccess {
  /** The SCRAM user name (the principal is `User:<user>`). */
  user: string;
  /** What the user is for, one sentence (docs, Kubernetes annotations). */
  purpose: string;
  /** A super user bypasses every ACL (super.users): the stack itself and tests, never a program. */
  superUser: boolean;
  acls: KafkaAcl[];
}

export interface KafkaConsumerAccessInput {
  /** The consumer's name: its Kafka user. */
  name: string;
  groupId: string;
  /** The topics it consumes; it writes a dead letter topic per topic (deadLetterTopicFor). */
  topics: readonly string[];
}

export interface KafkaAccessInput {
  /** TOPIC_PREFIX: the event topics are topicFor(prefix, aggregate). */
  topicPrefix: string;
  consumers: readonly KafkaConsumerAccessInput[];
  /** The Kafka Connect cluster: its group and the prefix of its config, offset and status topics (`<prefix>-configs` ...). */
  connect: { groupId: string; storageTopicPrefix: string };
  /** The aggregate types of the catalogue (one event topic each). */
  aggregates: readonly AggregateType[];
}

/** The users of the plan that are not consumers. */
export const KAFKA_ADMIN_USER = 'admin';
export const KAFKA_CONNECT_USER = 'connect';
export const KAFKA_REDRIVE_USER = 'redrive';
export const KAFKA_CONNECTOR_COMMAND_USER = 'connector-command';

/**
 * Debezium's heartbeat topic is `<heartbeat.topics.prefix>.<topic.prefix>`; the outbox connector
 * leaves heartbeat.topics.prefix at Debezium's default (checked against connectors/seat-outbox.json).
 */
export const DEBEZIUM_HEARTBEAT_TOPICS_PREFIX = '__debezium-heartbeat';

function debeziumHeartbeatTopic(topicPrefix: string): string {
  return `${DEBEZIUM_HEARTBEAT_TOPICS_PREFIX}.${topicPrefix}`;
}

/** Prefix of the throwaway groups redrive reads a dead letter topic with (consumers/redrive/read-dead-letters.ts). */
export function deadLetterReaderGroupPrefix(deadLetterTopic: string): string {
  return `read-${deadLetterTopic}-`;
}

const literal = (type: Exclude<KafkaResourceType, 'cluster'>, name: string): KafkaAclResource => ({
  type,
  name,
  patternType: 'literal',
});
const prefixed = (type: Exclude<KafkaResourceType, 'cluster'>, name: string): KafkaAclResource => ({
  type,
  name,
  patternType: 'prefix',
});
const CLUSTER: KafkaAclResource = { type: 'cluster', patternType: 'literal' };

/**
 * Creating a topic with the brokers' default replication factor reads it first (lib/kafka.ts
 * defaultReplicationFactor: DescribeConfigs of a broker, which Kafka authorizes on the cluster).
 */
const READ_BROKER_DEFAULTS: KafkaAcl = { resource: CLUSTER, operations: ['DescribeConfigs'] };

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function consumerAccess(consumer: KafkaConsumerAccessInput): KafkaUserAccess {
  return {
    user: consumer.name,
    purpose: `The ${consumer.name} consumer: reads ${consumer.topics.join(', ')} in group ${consumer.groupId}, creates and writes its dead letter topics.`,
    superUser: false,
    acls: [
      ...consumer.topics.map((topic): KafkaAcl => ({
        resource: literal('topic', topic),
        operations: ['Read', 'Describe'],
      })),
      { resource: literal('group', consumer.groupId), operations: ['Read', 'Describe'] },
      // consumers/runtime/consumer.ts ensureTopics its dead letter topics, then produces dead letters.
      ...consumer.topics.map((topic): KafkaAcl => ({
        resource: literal('topic', deadLetterTopicFor(topic)),
        operations: ['Create', 'Describe', 'Write'],
      })),
      READ_BROKER_DEFAULTS,
    ],
  };
}

/** The plan: one entry per user, in a stable order (admin, consumers, redrive, connector command, Connect). */
export function kafkaAccessPlan(input: KafkaAccessInput): KafkaUserAccess[] {
  const names = [
    KAFKA_ADMIN_USER,
    KAFKA_CONNECT_USER,
    KAFKA_REDRIVE_USER,
    KAFKA_CONNECTOR_COMMAND_USER,
    ...input.consumers.map((c) => c.name),
  ];
  const clash = names.find((name, i) => names.indexOf(name) !== i);
  if (clash !== undefined)
    throw new Error(
      `Kafka user ${JSON.stringify(clash)} is named twice in the access plan: give each consumer a name of its own, none of ${names.slice(0, 4).join(', ')}.`,
    );
  const eventTopics = unique(input.aggregates.map((a) => topicFor(input.topicPrefix, a)));
  const consumedTopics = unique(input.consumers.flatMap((c) => c.topics));
  const deadLetterTopics = consumedTopics.map(deadLetterTopicFor);
  const storage = input.connect.storageTopicPrefix;
  return [
    {
      user: KAFKA_ADMIN_USER,
      purpose:
        'The stack itself and tests: creates the ACLs and users, checks health. A super user; no program runs as it.',
      superUser: true,
      acls: [],
    },
    ...input.consumers.map(consumerAccess),
    {
      user: KAFKA_REDRIVE_USER,
      purpose:
        'The redrive command: reads dead letter topics with throwaway groups (deleted after) and writes the records back to their source topics.',
      superUser: false,
      acls: [
        ...deadLetterTopics.map((topic): KafkaAcl => ({
          resource: literal('topic', topic),
          operations: ['Read', 'Describe'],
        })),
        ...deadLetterTopics.map((topic): KafkaAcl => ({
          resource: prefixed('group', deadLetterReaderGroupPrefix(topic)),
          operations: ['Read', 'Describe', 'Delete'],
        })),
        ...consumedTopics.map((topic): KafkaAcl => ({
          resource: literal('topic', topic),
          operations: ['Write', 'Describe'],
        })),
      ],
    },
    {
      user: KAFKA_CONNECTOR_COMMAND_USER,
      purpose: 'The connector command: creates the event topics before it applies the outbox connector.',
      superUser: false,
      acls: [
        ...eventTopics.map((topic): KafkaAcl => ({
          resource: literal('topic', topic),
          operations: ['Create', 'Describe'],
        })),
        READ_BROKER_DEFAULTS,
      ],
    },
    {
      user: KAFKA_CONNECT_USER,
      purpose: `Kafka Connect: its group ${input.connect.groupId} and its ${storage}-* config, offset and status topics; the outbox connector writes the event topics and Debezium's heartbeat topic.`,
      superUser: false,
      acls: [
        { resource: literal('group', input.connect.groupId), operations: ['Read', 'Describe'] },
        // Workers create their storage topics at first start and check that they are compacted.
        {
          resource: prefixed('topic', `${storage}-`),
          operations: ['Create', 'Describe', 'DescribeConfigs', 'Read', 'Write'],
        },
        // The event topics exist (the connector command creates them); Connect looks them up and writes.
        ...eventTopics.map((topic): KafkaAcl => ({
          resource: literal('topic', topic),
          operations: ['Describe', 'Write'],
        })),
        // topic.creation.enable: Connect creates the heartbeat topic at the heartbeat's first record.
        {
          resource: literal('topic', debeziumHeartbeatTopic(input.topicPrefix)),
          operations: ['Create', 'Describe', 'Write'],
        },
      ],
    },
  ];
}

/** The user's entry, or a clear error naming the users there are. */
export function kafkaUserAccess(plan: readonly KafkaUserAccess[], user: string): KafkaUserAccess {
  const found = plan.find((u) => u.user === user);
  if (found === undefined)
    throw new Error(
      `no Kafka user ${JSON.stringify(user)} in the access plan; its users are ${plan.map((u) => u.user).join(', ')}`,
    );
  return found;
}

function resourceMatches(acl: KafkaAclResource, type: KafkaResourceType, name: string | undefined): boolean {
  if (acl.type !== type) return false;
  if (type === 'cluster') return true;
  if (name === undefined || acl.name === undefined) return false;
  return acl.patternType === 'literal' ? acl.name === name : name.startsWith(acl.name);
}

/**
 * Whether the user's ACLs allow `operation` on the resource, as Kafka's authorizer decides with
 * allow rules only: a super user may do anything; Read, Write, Delete and Alter imply Describe,
 * AlterConfigs implies DescribeConfigs.
 */
export function kafkaAccessAllows(
  access: KafkaUserAccess,
  type: KafkaResourceType,
  name: string | undefined,
  operation: KafkaOperation,
): boolean {
  if (access.superUser) return true;
  const implying: Partial<Record<KafkaOperation, KafkaOperation[]>> = {
    Describe: ['Read', 'Write', 'Delete', 'Alter'],
    DescribeConfigs: ['AlterConfigs'],
  };
  const granted = [operation, ...(implying[operation] ?? [])];
  return access.acls.some(
    (acl) => resourceMatches(acl.resource, type, name) && acl.operations.some((op) => granted.includes(op)),
  );
}
