/**
 * Kafka on Strimzi: three KRaft nodes (controller and broker each) in one KafkaNodePool, every
 * topic at three replicas with two in sync, and a KafkaTopic for each event topic and each dead
 * letter topic, so no program creates a topic with fewer replicas.
 */
import { DEAD_LETTER_RETENTION_MS } from '../../consumers/runtime/consumer.js';
import { deadLetterTopicFor } from '../../events/catalogue.js';
import { STRIMZI_API_VERSION, outboxTopics } from '../../connectors/outbox-connector.js';
import { readVersions } from '../../stack/config.js';
import { CLUSTER, KAFKA_LISTENER, PART_OF } from './cluster.js';
import { kubernetesConnectorConfig } from './connect.js';
import { clientsOf } from './network-policies.js';
import { strimziTemplate } from './pod-security.js';

const CLUSTER_LABEL = { 'strimzi.io/cluster': CLUSTER.kafka } as const;
const minIsr = String(CLUSTER.minInsyncReplicas);

/** Broker settings: the native stack's (stack/kafka.ts) with every internal topic at three replicas, two in sync. */
function brokerConfig(): Record<string, string | number | boolean> {
  return {
    'default.replication.factor': CLUSTER.replicationFactor,
    'min.insync.replicas': CLUSTER.minInsyncReplicas,
    'offsets.topic.replication.factor': CLUSTER.replicationFactor,
    'transaction.state.log.replication.factor': CLUSTER.replicationFactor,
    'transaction.state.log.min.isr': CLUSTER.minInsyncReplicas,
    'share.coordinator.state.topic.replication.factor': CLUSTER.replicationFactor,
    'share.coordinator.state.topic.min.isr': CLUSTER.minInsyncReplicas,
    'num.partitions': 3,
    'auto.create.topics.enable': false,
    'log.retention.hours': 168,
  };
}

export function kafka() {
  return {
    apiVersion: STRIMZI_API_VERSION,
    kind: 'Kafka',
    metadata: {
      name: CLUSTER.kafka,
      // KRaft with node pools is the only mode of the v1 API: no annotations switch them on any more.
      labels: { ...PART_OF },
    },
    spec: {
      kafka: {
        version: readVersions().kafka,
        // One listener: TLS with the cluster CA's certificates, SCRAM-SHA-512 users, and only the
        // pods of Kafka's clients may open a connection (Strimzi renders the peers as a NetworkPolicy).
        listeners: [
          {
            ...KAFKA_LISTENER,
            type: 'internal',
            tls: true,
            authentication: { type: 'scram-sha-512' },
            networkPolicyPeers: clientsOf('kafka'),
          },
        ],
        // Every user has exactly its KafkaUser's ACLs; no super user (the operators authenticate
        // with their own certificates on Strimzi's internal listener and are super users there).
        authorization: { type: 'simple' },
        config: brokerConfig(),
      },
      // The Topic Operator turns the KafkaTopic resources into topics, the User Operator the KafkaUsers into users and ACLs.
      entityOperator: {
        topicOperator: {},
        userOperator: {},
        template: strimziTemplate(['topicOperatorContainer', 'userOperatorContainer']),
      },
    },
  };
}

export function kafkaNodePool() {
  return {
    apiVersion: STRIMZI_API_VERSION,
    kind: 'KafkaNodePool',
    metadata: { name: CLUSTER.nodePool, labels: { ...CLUSTER_LABEL, ...PART_OF } },
    spec: {
      replicas: CLUSTER.kafkaNodes,
      roles: ['controller', 'broker'],
      storage: {
        type: 'jbod',
        volumes: [{ id: 0, type: 'persistent-claim', size: '20Gi', deleteClaim: false, kraftMetadata: 'shared' }],
      },
      resources: { requests: { cpu: '250m', memory: '1536Mi' }, limits: { memory: '2Gi' } },
      jvmOptions: { '-Xms': '512m', '-Xmx': '1g' },
      // fsGroup 0: the persistent volume writable by the kafka user, as Strimzi sets it when no template does.
      template: strimziTemplate(['kafkaContainer', 'initContainer'], { fsGroup: 0 }),
    },
  };
}

/** A Kubernetes name for a topic name (dots and underscores are not all allowed everywhere). */
function resourceName(topic: string): string {
  return topic
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function kafkaTopic(topic: string, partitions: number, config: Record<string, string>) {
  return {
    apiVersion: STRIMZI_API_VERSION,
    kind: 'KafkaTopic',
    metadata: { name: resourceName(topic), labels: { ...CLUSTER_LABEL, ...PART_OF } },
    spec: {
      topicName: topic,
      partitions,
      replicas: CLUSTER.replicationFactor,
      config: { 'min.insync.replicas': minIsr, ...config },
    },
  };
}

/** The event topics (partitions: the connector command's TOPIC_PARTITIONS, as `npm run connector -- apply` creates them). */
export function eventTopics() {
  const config = kubernetesConnectorConfig();
  return outboxTopics(config.topicPrefix).map((topic) => kafkaTopic(topic, config.topicPartitions, {}));
}

/** One dead letter topic per event topic a consumer reads, as the consumers create them (one partition, their retention). */
export function deadLetterTopics(sourceTopics: readonly string[]) {
  return [...new Set(sourceTopics)].map((topic) =>
    kafkaTopic(deadLetterTopicFor(topic), 1, { 'retention.ms': DEAD_LETTER_RETENTION_MS }),
  );
}
