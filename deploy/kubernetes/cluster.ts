/**
 * What the Kubernetes manifests assume about the cluster they are applied to: the names of what
 * the platform provides (the seat database, the schema registry, SMTP, Alertmanager, an image
 * registry), the Secrets to create, and the durability every topic gets. One place, so
 * docs/kubernetes.md and the test read the same facts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KUBERNETES_CONNECT_CLUSTER } from '../../connectors/outbox-connector.js';
import { KAFKA_CONNECT_USER } from '../../lib/kafka-access.js';
import { projectRoot } from '../../stack/config.js';

/** The Strimzi Kafka resource; Strimzi names its bootstrap Service `<name>-kafka-bootstrap`. */
const KAFKA_CLUSTER = 'stagefront';

/** The one listener clients reach: TLS, SCRAM-SHA-512 users (KafkaUsers), ACLs. */
export const KAFKA_LISTENER = { name: 'tls', port: 9093 } as const;

/**
 * The cluster CA's certificate, which Strimzi keeps in `<cluster>-cluster-ca-cert` (key ca.crt):
 * mounted read-only into every Kafka client's pod, so clients check the brokers' certificates.
 */
export const KAFKA_CLUSTER_CA = {
  secretName: `${KAFKA_CLUSTER}-cluster-ca-cert`,
  key: 'ca.crt',
  mountPath: '/etc/stagefront/kafka-ca',
} as const;

export const CLUSTER = {
  kafka: KAFKA_CLUSTER,
  nodePool: 'dual-role',
  connect: KUBERNETES_CONNECT_CLUSTER,
  bootstrapServers: `${KAFKA_CLUSTER}-kafka-bootstrap:${KAFKA_LISTENER.port}`,
  /** Three KRaft nodes, each a controller and a broker. */
  kafkaNodes: 3,
  replicationFactor: 3,
  minInsyncReplicas: 2,
  connectReplicas: 2,
  /** The seat database as Connect and the programs reach it (a Service the platform provides). */
  seatDbHost: 'seat-db',
  seatDbPort: 5432,
  /** The consumer database's port where its pods run in the namespace (its URL is in a Secret; the NetworkPolicy needs the port). */
  consumerDbPort: 5432,
  registryUrl: 'http://apicurio-registry:8080/apis/ccompat/v7',
  /** The Prometheus operator's Service in front of an Alertmanager resource. */
  alertmanagerUrl: 'http://alertmanager-operated:9093',
  smtpHost: 'smtp',
  smtpPort: 587,
} as const;

/** Where images are pushed and pulled: replace with the platform's registry (docs/kubernetes.md). */
export const IMAGE_REGISTRY = 'registry.example.com/stagefront';

/** The project's programs, built from deploy/kubernetes/Containerfile and tagged with package.json's version. */
export function programImage(): string {
  const { version } = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string };
  return `${IMAGE_REGISTRY}/programs:${version}`;
}

export interface SecretRef {
  /** The Secret's name. */
  name: string;
  key: string;
  /** The program runs without it (an SMTP server without authentication). */
  optional?: boolean;
}

/** Every Secret the manifests read, by what it holds. Created by the platform team, never committed. */
export const SECRETS = {
  debeziumPassword: { name: 'stagefront-debezium-db', key: 'password' },
  consumerDatabaseUrl: { name: 'stagefront-consumer-db', key: 'url' },
  smtpPassword: { name: 'stagefront-smtp', key: 'password', optional: true },
  slotMonitorDatabaseUrl: { name: 'stagefront-slot-monitor-db', key: 'url' },
  slotMonitorStandbyUrls: { name: 'stagefront-slot-monitor-db', key: 'standby-urls', optional: true },
  jobWatchdogDatabaseUrl: { name: 'stagefront-job-watchdog-db', key: 'url' },
  seatServiceDatabaseUrl: { name: 'stagefront-seat-service-db', key: 'url' },
} as const satisfies Record<string, SecretRef>;

/** Kafka Connect's Kafka user (the access plan's; its KafkaUser's Secret, of the same name, holds the password). */
export const CONNECT_KAFKA_USER = KAFKA_CONNECT_USER;

/**
 * The password of a program's Kafka user (KAFKA_SASL_PASSWORD): the Secret Strimzi's User Operator
 * writes for a KafkaUser, named as the user. Not optional: every client in the cluster uses
 * sasl_ssl, so a pod waits for the Secret rather than starting without a password.
 */
export function kafkaUserSecret(user: string): SecretRef {
  return { name: user, key: 'password' };
}

/** The registry credentials Strimzi pushes the built Connect image with (a docker-registry Secret). */
export const CONNECT_BUILD_PUSH_SECRET = 'stagefront-connect-build-push';

export const PART_OF = { 'app.kubernetes.io/part-of': 'stagefront' } as const;

/**
 * The pods of what the platform provides, as the NetworkPolicies select them: the labels their
 * pods carry in this namespace (a managed service outside it needs the platform's own rules,
 * docs/kubernetes.md). Prometheus may run in another namespace: any namespace, its pods' label.
 */
export const PLATFORM_PODS = {
  'seat-db': { 'app.kubernetes.io/name': 'seat-db' },
  'consumer-db': { 'app.kubernetes.io/name': 'consumer-db' },
  registry: { 'app.kubernetes.io/name': 'apicurio-registry' },
  // The Prometheus operator's labels on an Alertmanager resource's pods.
  alertmanager: { 'app.kubernetes.io/name': 'alertmanager' },
  smtp: { 'app.kubernetes.io/name': 'smtp' },
} as const;
/** The Prometheus operator's label on a Prometheus resource's pods. */
export const PROMETHEUS_PODS = { 'app.kubernetes.io/name': 'prometheus' } as const;

/** A one-off pod of a tool (the connector command, slot recovery, redrive) carries this label, its value the tool's name. */
export const TOOL_LABEL = 'stagefront.io/tool';
