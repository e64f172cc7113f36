/**
 * Kafka Connect on Strimzi: a KafkaConnect whose image Strimzi builds with the Debezium Postgres
 * connector from Maven, configured like the native stack's worker (stack/connect.ts), and the
 * outbox connector as a KafkaConnector rendered by the connector command from connectors/seat-outbox.json.
 */
import {
  STRIMZI_API_VERSION,
  renderOutboxKafkaConnector,
  type ConnectorConfig,
} from '../../connectors/outbox-connector.js';
import { connectorSettings } from '../../connectors/settings.js';
import { parseSettings } from '../../lib/settings.js';
import { CONNECT_SECRET_ENV, STACK_CONNECT_CLUSTER, workerProperties } from '../../stack/connect.js';
import { readVersions, stackLayout } from '../../stack/config.js';
import {
  CLUSTER,
  CONNECT_BUILD_PUSH_SECRET,
  CONNECT_KAFKA_USER,
  IMAGE_REGISTRY,
  KAFKA_CLUSTER_CA,
  PART_OF,
  SECRETS,
} from './cluster.js';
import { strimziTemplate } from './pod-security.js';

/**
 * The connector command's settings in the cluster: what differs from its defaults. The password
 * stays the default reference, ${env:DEBEZIUM_DB_PASSWORD}, which the worker's env provider
 * resolves from its container's environment (filled from a Secret below).
 */
export const KUBERNETES_CONNECTOR_ENV: Readonly<Record<string, string>> = {
  SEAT_DB_HOST: CLUSTER.seatDbHost,
  SEAT_DB_PORT: String(CLUSTER.seatDbPort),
  KAFKA_BROKERS: CLUSTER.bootstrapServers,
  CONNECT_URL: `http://${CLUSTER.connect}-connect-api:8083`,
  // Read only by `status`, never by rendering; a URL without credentials satisfies the parser.
  CONNECTOR_SEAT_DB_URL: `postgres://${CLUSTER.seatDbHost}:${CLUSTER.seatDbPort}/stagefront`,
};

export function kubernetesConnectorConfig(): ConnectorConfig {
  return parseSettings(connectorSettings, KUBERNETES_CONNECTOR_ENV);
}

/**
 * Worker properties Strimzi sets itself and refuses in spec.config: bootstrap, REST listener,
 * plugin path, and the group and storage topics, which are fields of the KafkaConnect's spec.
 * The native worker's basic-auth REST extension (rest.extension.classes) is left out on purpose:
 * Strimzi's Cluster Operator manages the KafkaConnector through the REST API without credentials
 * and would be locked out. In the cluster the REST API is closed by NetworkPolicy instead (Strimzi's
 * own: the operator and the workers; ours: the tool pods that call it), docs/kubernetes.md.
 */
const STRIMZI_MANAGED = [
  /^bootstrap\.servers$/,
  /^listeners$/,
  /^rest\./,
  /^plugin\.path$/,
  /^group\.id$/,
  /^(config|offset|status)\.storage\.topic$/,
];

/** The native worker's properties (stack/connect.ts) as a map. */
function nativeWorkerProperties(): Record<string, string> {
  return Object.fromEntries(
    workerProperties(stackLayout({}), STACK_CONNECT_CLUSTER)
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const),
  );
}

/** What a worker of three-broker Kafka changes from the native one: storage topics at three replicas, producers acks=all and idempotent. */
export const KUBERNETES_WORKER_OVERRIDES: Readonly<Record<string, string>> = {
  'config.storage.replication.factor': String(CLUSTER.replicationFactor),
  'offset.storage.replication.factor': String(CLUSTER.replicationFactor),
  'status.storage.replication.factor': String(CLUSTER.replicationFactor),
  'producer.acks': 'all',
  'producer.enable.idempotence': 'true',
};

/** The native stack's worker properties (stack/connect.ts), less what Strimzi manages, with the overrides above. */
function kubernetesWorkerConfig(): Record<string, string> {
  const native = Object.entries(nativeWorkerProperties()).filter(
    ([key]) => !STRIMZI_MANAGED.some((pattern) => pattern.test(key)),
  );
  return { ...Object.fromEntries(native), ...KUBERNETES_WORKER_OVERRIDES };
}

/** The native worker's group and storage topics, as the KafkaConnect spec's own fields. */
function workerGroup() {
  const native = nativeWorkerProperties();
  const get = (key: string) => {
    const value = native[key];
    if (value === undefined) throw new Error(`stack/connect.ts: the worker has no ${key}`);
    return value;
  };
  return {
    groupId: get('group.id'),
    configStorageTopic: get('config.storage.topic'),
    offsetStorageTopic: get('offset.storage.topic'),
    statusStorageTopic: get('status.storage.topic'),
  };
}

/** The Debezium Postgres connector's Maven coordinates at the stack's Debezium version. */
function debeziumArtifact() {
  return {
    type: 'maven',
    group: 'io.debezium',
    artifact: 'debezium-connector-postgres',
    version: readVersions().debezium,
  } as const;
}

/** Worker environment variables a connector may read (CONNECT_SECRET_ENV) and the Secrets they come from. */
const WORKER_SECRET_ENV: Record<(typeof CONNECT_SECRET_ENV)[number], { name: string; key: string }> = {
  DEBEZIUM_DB_PASSWORD: SECRETS.debeziumPassword,
};

export function kafkaConnect() {
  const versions = readVersions();
  return {
    apiVersion: STRIMZI_API_VERSION,
    kind: 'KafkaConnect',
    metadata: {
      name: CLUSTER.connect,
      labels: { ...PART_OF },
      // Connectors are KafkaConnector resources, not REST calls.
      annotations: { 'strimzi.io/use-connector-resources': 'true' },
    },
    spec: {
      version: versions.kafka,
      replicas: CLUSTER.connectReplicas,
      bootstrapServers: CLUSTER.bootstrapServers,
      // The brokers' certificates checked against the cluster CA; the worker is its KafkaUser (its password from the User Operator's Secret).
      tls: { trustedCertificates: [{ secretName: KAFKA_CLUSTER_CA.secretName, certificate: KAFKA_CLUSTER_CA.key }] },
      authentication: {
        type: 'scram-sha-512',
        username: CONNECT_KAFKA_USER,
        passwordSecret: { secretName: CONNECT_KAFKA_USER, password: 'password' },
      },
      ...workerGroup(),
      config: kubernetesWorkerConfig(),
      build: {
        output: {
          type: 'docker',
          image: `${IMAGE_REGISTRY}/connect:${versions.kafka}-debezium-${versions.debezium}`,
          pushSecret: CONNECT_BUILD_PUSH_SECRET,
        },
        plugins: [{ name: 'debezium-postgres', artifacts: [debeziumArtifact()] }],
      },
      template: {
        ...strimziTemplate(['initContainer']),
        connectContainer: {
          env: CONNECT_SECRET_ENV.map((name) => ({ name, valueFrom: { secretKeyRef: WORKER_SECRET_ENV[name] } })),
          ...strimziTemplate(['connectContainer']).connectContainer,
        },
      },
      resources: { requests: { cpu: '250m', memory: '1Gi' }, limits: { memory: '1536Mi' } },
      jvmOptions: { '-Xms': '256m', '-Xmx': '768m' },
    },
  };
}

export function kafkaConnector() {
  return renderOutboxKafkaConnector(kubernetesConnectorConfig(), CLUSTER.connect);
}
