/**
 * The long-running programs as Deployments: the three consumers and every one a team added
 * (consumers/team-consumers.ts), the slot monitor, the job watchdog and the hold sweeper, each
 * run as its npm script runs it, configured through its
 * settings table (only what differs from the defaults, passwords from Secrets), probed on
 * /healthz and /readyz of its metrics port, and scraped by Prometheus under the job names the
 * alert rules use (stack/prometheus-config.ts SCRAPE_PORTS).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectorSettings } from '../../connectors/settings.js';
import { redriveSettings } from '../../consumers/redrive/settings.js';
import { slotRecoverySettings } from '../../monitors/slot-recovery/settings.js';
import { confirmationEmailSettings, confirmationEmailTopics } from '../../consumers/confirmation-email/consumer.js';
import { salesLedgerConsumer, salesLedgerSettings } from '../../consumers/sales-ledger/consumer.js';
import { seatAvailabilityConsumer, seatAvailabilitySettings } from '../../consumers/seat-availability/consumer.js';
import { TEAM_CONSUMERS } from '../../consumers/team-consumers.js';
import { KAFKA_CONNECTOR_COMMAND_USER, KAFKA_REDRIVE_USER } from '../../lib/kafka-access.js';
import { parseSettings, type SettingsDefinition, type SettingsTable } from '../../lib/settings.js';
import { jobWatchdogSettings } from '../../monitors/job-watchdog/settings.js';
import { slotMonitorSettings } from '../../monitors/slot-monitor/settings.js';
import { holdSweeperSettings } from '../../seat-service/sweeper-settings.js';
import { projectRoot } from '../../stack/config.js';
import type { SCRAPE_PORTS } from '../../stack/prometheus-config.js';
import {
  CLUSTER,
  KAFKA_CLUSTER_CA,
  PART_OF,
  SECRETS,
  kafkaUserSecret,
  programImage,
  type SecretRef,
} from './cluster.js';
import { kubernetesConnectorConfig } from './connect.js';
import { PROGRAM_UID, TMP_MOUNT, TMP_VOLUME, containerSecurityContext, podSecurityContext } from './pod-security.js';

/** What a program connects to, as the NetworkPolicies allow it (deploy/kubernetes/network-policies.ts). */
export type Reach = 'kafka' | 'connect-rest' | 'seat-db' | 'consumer-db' | 'registry' | 'alertmanager' | 'smtp';

/**
 * The tools an operator runs in the namespace as one-off pods (`kubectl run` or a Job), each pod
 * labelled `stagefront.io/tool=<name>` (TOOL_LABEL): the NetworkPolicies let exactly these reach
 * what the tool needs. The connector command's `status` and slot recovery are the only clients
 * of Connect's REST API besides the Strimzi operator.
 */
export interface Tool {
  name: string;
  /** The npm script it is. */
  script: string;
  settings: SettingsDefinition<SettingsTable>;
  reaches: readonly Reach[];
  /** Its user of the access plan (lib/kafka-access.ts), when it reaches Kafka. */
  kafkaUser?: string;
}

export function tools(): Tool[] {
  return [
    {
      name: 'connector',
      script: 'connector',
      settings: connectorSettings,
      reaches: ['kafka', 'connect-rest', 'seat-db'],
      kafkaUser: KAFKA_CONNECTOR_COMMAND_USER,
    },
    {
      name: 'slot-recovery',
      script: 'slot-recovery',
      settings: slotRecoverySettings,
      reaches: ['connect-rest', 'seat-db'],
    },
    {
      name: 'redrive',
      script: 'redrive',
      settings: redriveSettings,
      reaches: ['kafka', 'consumer-db'],
      kafkaUser: KAFKA_REDRIVE_USER,
    },
  ];
}

export interface Program {
  /** Deployment, Service and container name. */
  name: string;
  /** The npm script in package.json whose command the container runs. */
  script: string;
  settings: SettingsDefinition<SettingsTable>;
  replicas: number;
  /** The Prometheus job the alert rules know it by. */
  scrapeJob: keyof typeof SCRAPE_PORTS;
  component: 'consumer' | 'monitor' | 'scheduled-job';
  /** The topics a consumer reads: its replicas stay at or below their partitions. */
  topics: readonly string[];
  /** Settings that differ from their defaults in the cluster (never a secret). */
  env: Record<string, string>;
  /** Secret settings, each from a Secret. */
  secrets: Record<string, SecretRef>;
  /** What it connects to: each an ingress rule of the NetworkPolicies (deploy/kubernetes/network-policies.ts). */
  reaches: readonly Reach[];
}

/** The Kafka user of a program that reaches Kafka: its KafkaUser (lib/kafka-access.ts's plan) is named after it. */
export function kafkaUserOf(program: Pick<Program, 'name' | 'reaches'>): string | undefined {
  return program.reaches.includes('kafka') ? program.name : undefined;
}

/** The client settings of a Kafka user on the TLS listener: SCRAM, its password from the Secret the User Operator writes, the cluster CA mounted read-only. */
function kafkaClientEnv(user: string): { env: Record<string, string>; secrets: Record<string, SecretRef> } {
  return {
    env: {
      KAFKA_SECURITY_PROTOCOL: 'sasl_ssl',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: user,
      KAFKA_TLS_CA_FILE: `${KAFKA_CLUSTER_CA.mountPath}/${KAFKA_CLUSTER_CA.key}`,
    },
    secrets: { KAFKA_SASL_PASSWORD: kafkaUserSecret(user) },
  };
}

/** Every program listens on all interfaces in a pod: its probes and Prometheus come from outside the container. */
const ALL_INTERFACES = '0.0.0.0';

export function programs(): Program[] {
  const connector = kubernetesConnectorConfig();
  const prefix = connector.topicPrefix;
  const consumerEnv = {
    KAFKA_BROKERS: CLUSTER.bootstrapServers,
    SCHEMA_REGISTRY_URL: CLUSTER.registryUrl,
    TOPIC_PREFIX: prefix,
    METRICS_HOST: ALL_INTERFACES,
  };
  const consumer = (
    name: string,
    settings: SettingsDefinition<SettingsTable>,
    replicas: number,
    topics: readonly string[],
    extra: Record<string, string> = {},
    secrets: Record<string, SecretRef> = {},
    reachesToo: Reach[] = [],
  ): Program => {
    const kafkaClient = kafkaClientEnv(name);
    return {
      name,
      script: `consumer:${name}`,
      settings,
      replicas,
      scrapeJob: 'consumers',
      component: 'consumer',
      topics,
      env: { ...consumerEnv, ...kafkaClient.env, ...extra },
      secrets: { CONSUMER_DATABASE_URL: SECRETS.consumerDatabaseUrl, ...kafkaClient.secrets, ...secrets },
      reaches: ['kafka', 'registry', 'consumer-db', ...reachesToo],
    };
  };
  return [
    consumer(
      'seat-availability',
      seatAvailabilitySettings,
      3,
      seatAvailabilityConsumer('seat-availability', prefix).topics,
    ),
    consumer('sales-ledger', salesLedgerSettings, 2, salesLedgerConsumer('sales-ledger', prefix).topics),
    // confirmationEmailConsumer needs an SMTP transport to be built; it reads order events.
    consumer(
      'confirmation-email',
      confirmationEmailSettings,
      2,
      confirmationEmailTopics(prefix),
      { SMTP_HOST: CLUSTER.smtpHost, SMTP_PORT: String(CLUSTER.smtpPort) },
      { SMTP_PASSWORD: SECRETS.smtpPassword },
      ['smtp'],
    ),
    // Every consumer a team added (npm run new-consumer writes the entry).
    ...TEAM_CONSUMERS.map((team) => consumer(team.name, team.settings, team.replicas, team.topics(prefix))),
    {
      name: 'slot-monitor',
      script: 'slot-monitor',
      settings: slotMonitorSettings,
      // One reader of pg_replication_slots: a second would alert and correct the keep size twice.
      replicas: 1,
      scrapeJob: 'slot-monitor',
      component: 'monitor',
      topics: [],
      env: {
        SLOT_MONITOR_SLOTS: connector.slotName,
        SLOT_MONITOR_ALERTMANAGER_URL: CLUSTER.alertmanagerUrl,
        SLOT_MONITOR_METRICS_HOST: ALL_INTERFACES,
      },
      secrets: {
        SLOT_MONITOR_DATABASE_URL: SECRETS.slotMonitorDatabaseUrl,
        SLOT_MONITOR_STANDBY_URLS: SECRETS.slotMonitorStandbyUrls,
      },
      reaches: ['seat-db', 'alertmanager'],
    },
    {
      name: 'job-watchdog',
      script: 'job-watchdog',
      settings: jobWatchdogSettings,
      replicas: 1,
      scrapeJob: 'job-watchdog',
      component: 'monitor',
      topics: [],
      env: { JOB_WATCHDOG_ALERTMANAGER_URL: CLUSTER.alertmanagerUrl, JOB_WATCHDOG_METRICS_HOST: ALL_INTERFACES },
      secrets: { JOB_WATCHDOG_DATABASE_URL: SECRETS.jobWatchdogDatabaseUrl },
      reaches: ['seat-db', 'alertmanager'],
    },
    {
      name: 'hold-sweeper',
      script: 'hold-sweeper',
      settings: holdSweeperSettings,
      // Each run slot is claimed in job_runs: of two sweepers exactly one runs it, and one survives a node loss.
      replicas: 2,
      scrapeJob: 'hold-sweeper',
      component: 'scheduled-job',
      topics: [],
      env: { SCHEMA_REGISTRY_URL: CLUSTER.registryUrl, HOLD_SWEEPER_METRICS_HOST: ALL_INTERFACES },
      secrets: { SEAT_DB_URL: SECRETS.seatServiceDatabaseUrl },
      reaches: ['seat-db', 'registry'],
    },
  ];
}

/** The command of an npm script (`node --enable-source-maps dist/<entry>.js`, the compiled program), run directly so the program is PID 1 and gets SIGTERM. */
export function scriptCommand(script: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const line = scripts[script];
  if (line === undefined) throw new Error(`package.json has no script ${script}`);
  return line.split(/\s+/);
}

/** The configuration the program parses from the Deployment's environment (secrets stand in as their examples). */
export function programConfig(program: Program): Record<string, unknown> {
  const secretStandIns = Object.fromEntries(
    Object.values(program.settings.settings)
      .filter((s) => program.secrets[s.env] !== undefined)
      .map((s) => [s.env, s.parser.example]),
  );
  return parseSettings(program.settings, { ...program.env, ...secretStandIns }) as Record<string, unknown>;
}

export function metricsPort(program: Program): number {
  return programConfig(program).metricsPort as number;
}

function labels(program: Program) {
  return { 'app.kubernetes.io/name': program.name, 'app.kubernetes.io/component': program.component, ...PART_OF };
}

function selector(program: Program) {
  return { 'app.kubernetes.io/name': program.name, ...PART_OF };
}

export function deployment(program: Program) {
  const port = metricsPort(program);
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({
    httpGet: { path, port },
    periodSeconds,
    failureThreshold,
    timeoutSeconds: 3,
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: program.name, labels: labels(program) },
    spec: {
      replicas: program.replicas,
      selector: { matchLabels: selector(program) },
      template: {
        metadata: { labels: labels(program) },
        spec: {
          // No program talks to the Kubernetes API.
          automountServiceAccountToken: false,
          securityContext: podSecurityContext(PROGRAM_UID, { gid: PROGRAM_UID }),
          terminationGracePeriodSeconds: 30,
          containers: [
            {
              name: program.name,
              image: programImage(),
              command: scriptCommand(program.script),
              env: [
                ...Object.entries(program.env).map(([name, value]) => ({ name, value })),
                ...Object.entries(program.secrets).map(([name, ref]) => ({
                  name,
                  valueFrom: {
                    secretKeyRef: { name: ref.name, key: ref.key, ...(ref.optional ? { optional: true } : {}) },
                  },
                })),
              ],
              ports: [{ name: 'metrics', containerPort: port }],
              // A program takes seconds to start on a busy node: liveness waits until it answered once.
              startupProbe: probe('/healthz', 2, 60),
              livenessProbe: probe('/healthz', 10, 3),
              readinessProbe: probe('/readyz', 5, 2),
              resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '512Mi' } },
              securityContext: containerSecurityContext(),
              volumeMounts: [
                TMP_MOUNT,
                ...(kafkaUserOf(program)
                  ? [{ name: 'kafka-ca', mountPath: KAFKA_CLUSTER_CA.mountPath, readOnly: true }]
                  : []),
              ],
            },
          ],
          volumes: [
            TMP_VOLUME,
            ...(kafkaUserOf(program)
              ? [
                  {
                    name: 'kafka-ca',
                    secret: {
                      secretName: KAFKA_CLUSTER_CA.secretName,
                      items: [{ key: KAFKA_CLUSTER_CA.key, path: KAFKA_CLUSTER_CA.key }],
                    },
                  },
                ]
              : []),
          ],
        },
      },
    },
  };
}

/** The label whose value is the Prometheus job (the ServiceMonitor's jobLabel). */
export const SCRAPE_JOB_LABEL = 'stagefront.io/scrape-job';

export function service(program: Program) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: program.name, labels: { ...labels(program), [SCRAPE_JOB_LABEL]: program.scrapeJob } },
    spec: {
      selector: selector(program),
      ports: [{ name: 'metrics', port: metricsPort(program), targetPort: 'metrics' }],
    },
  };
}

/** How often Prometheus scrapes every program in Kubernetes (the ServiceMonitor's endpoint interval). */
export const SCRAPE_INTERVAL = '15s';

/**
 * The rule evaluation interval the alert rules are checked against in Kubernetes: the project ships
 * no Prometheus resource, so it is the Prometheus Operator's default evaluationInterval.
 */
export const ASSUMED_EVALUATION_INTERVAL = '30s';

/** One ServiceMonitor for every program's Service; each pod is a target, its job the Service's scrape-job label. */
export function serviceMonitor() {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: { name: 'stagefront-programs', labels: { ...PART_OF } },
    spec: {
      jobLabel: SCRAPE_JOB_LABEL,
      selector: { matchLabels: { ...PART_OF }, matchExpressions: [{ key: SCRAPE_JOB_LABEL, operator: 'Exists' }] },
      endpoints: [{ port: 'metrics', path: '/metrics', interval: SCRAPE_INTERVAL }],
    },
  };
}
