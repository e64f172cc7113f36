import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import type { ConnectApi } from '../connectors/connect-client.js';
import {
  ConfigError,
  defineSettings,
  parseSettings,
  zBool,
  zDurationMs,
  zEnum,
  zInt,
  zPort,
  zString,
  type Config,
  type SettingParser,
} from '../lib/settings.js';
import { projectRoot } from '../lib/source-tree.js';

export { projectRoot };

/** Component versions: the one place that the native launcher and docker-compose.yml agree on. */
const versionsSchema = z.object({
  postgres: z.string(),
  /** Postgres server binaries from Maven Central (io.zonky.test.postgres), used when the standby needs 17+ and the system has less. */
  postgresBinaries: z.string(),
  kafka: z.string(),
  debezium: z.string(),
  apicurio: z.string(),
  scala: z.string(),
  alertmanager: z.string(),
  prometheus: z.string(),
});
export type StackVersions = z.infer<typeof versionsSchema>;

export function readVersions(): StackVersions {
  const raw = readFileSync(join(projectRoot, 'stack', 'versions.json'), 'utf8');
  return versionsSchema.parse(JSON.parse(raw));
}

const port = zPort();
const megabytes = zInt({ min: 1, example: '512' });

/** `auto` (worked out from other settings) or a whole number of at least 1. */
function autoOrCount(example: string): SettingParser<number | 'auto'> {
  return {
    schema: z.union([
      z.literal('auto'),
      z.string().trim().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1)),
    ]),
    expected: 'auto or a whole number of at least 1',
    example,
  };
}

export const stackSettings = defineSettings('stack', {
  home: {
    env: 'STACK_HOME',
    default: '.stack',
    parser: zString({ minLength: 1, example: '.stack' }),
    description: "Folder for the stack's downloads, data, logs and process ids (relative to the project root).",
  },
  dist: {
    env: 'STACK_DIST',
    default: 'dist',
    parser: zString({ minLength: 1, example: '/opt/stagefront-dist' }),
    description:
      'Folder for the downloaded Kafka, Connect, Debezium and Apicurio (relative to the stack home); stacks may share one.',
  },
  installMissing: {
    env: 'STACK_INSTALL_MISSING',
    default: 'yes',
    parser: zBool(),
    description:
      'As root on a Debian-like machine, install missing Java, Maven, Postgres, Alertmanager and Prometheus with apt-get (and, for npm run test:all, Chromium); no only names what is missing.',
  },
  postgresPort: {
    env: 'STACK_POSTGRES_PORT',
    default: '54329',
    parser: port,
    description: "Port of the stack's own Postgres cluster (loopback only).",
  },
  postgresWalSegmentMb: {
    env: 'STACK_POSTGRES_WAL_SEGMENT_MB',
    default: '16',
    parser: megabytes,
    description:
      'WAL segment size given to initdb; 1 makes slot-limit tests fill in seconds. Only read when the cluster is created.',
  },
  postgresMaxSlotWalKeepSize: {
    env: 'STACK_POSTGRES_MAX_SLOT_WAL_KEEP_SIZE',
    default: '4GB',
    parser: zString({
      pattern: /^(-1|\d+(kB|MB|GB|TB)?)$/,
      expected: 'a Postgres size such as 4GB, 512MB or -1',
      example: '4GB',
    }),
    description:
      "max_slot_wal_keep_size written into the cluster's configuration (the slot monitor enforces its own target).",
  },
  postgresStandby: {
    env: 'STACK_POSTGRES_STANDBY',
    default: 'no',
    parser: zBool(),
    description:
      'yes: the seat database runs as a primary with a streaming physical standby (its own folder and port, a physical slot, hot_standby_feedback, logical slots synchronized to it), so the outbox connector can fail over with its slot; needs Postgres 17+ (see STACK_POSTGRES_BINARIES). Only read when the clusters are created or started.',
  },
  postgresStandbyPort: {
    env: 'STACK_POSTGRES_STANDBY_PORT',
    default: '54330',
    parser: port,
    description: 'Port of the standby cluster (loopback only) when STACK_POSTGRES_STANDBY is yes.',
  },
  postgresEndpointPort: {
    env: 'STACK_POSTGRES_ENDPOINT_PORT',
    default: '54331',
    parser: port,
    description:
      "With STACK_POSTGRES_STANDBY=yes: port of the stack's primary endpoint (loopback only), a TCP forwarder that sends each new connection to whichever node is the primary (pg_is_in_recovery() = false), so the programs, the registry and the consumer database follow a failover. The stack's programs use it; the outbox connector and the standby reach the nodes on their own ports. Unused without the standby.",
  },
  postgresBinaries: {
    env: 'STACK_POSTGRES_BINARIES',
    default: 'auto',
    parser: zEnum(['auto', 'system', 'maven'] as const),
    description:
      'Which Postgres server binaries run the clusters: system (the newest installed 15+), maven (the Postgres 17 binaries of stack/versions.json from Maven Central, unpacked once into the dist folder), or auto: system, except with the standby on and a system Postgres older than 17. A cluster keeps the major version it was created with.',
  },
  kafkaPort: {
    env: 'STACK_KAFKA_PORT',
    default: '19092',
    parser: port,
    description: 'Kafka broker listener (loopback only).',
  },
  kafkaSecurity: {
    env: 'STACK_KAFKA_SECURITY',
    default: 'plaintext',
    parser: zEnum(['plaintext', 'sasl_ssl'] as const),
    description:
      "plaintext: the broker listener takes anyone on loopback (the default). sasl_ssl: TLS with a local CA (kafka-tls/ in the stack home, owner-only), SCRAM-SHA-512 users from the access plan, one per program, and ACLs that allow each its job only (nothing without an ACL); the controller listener needs the node certificate. Connect, the stack's checks and the programs it runs get their own users. Fixed when the Kafka nodes are first formatted.",
  },
  kafkaControllerPort: {
    env: 'STACK_KAFKA_CONTROLLER_PORT',
    default: '19093',
    parser: port,
    description: 'KRaft controller listener (loopback only).',
  },
  connectPort: {
    env: 'STACK_CONNECT_PORT',
    default: '18083',
    parser: port,
    description: 'Kafka Connect REST API (loopback only).',
  },
  connectWorkers: {
    env: 'STACK_CONNECT_WORKERS',
    default: '1',
    parser: zInt({ min: 1, max: 9, example: '2' }),
    description:
      "Kafka Connect workers in the stack's one Connect cluster (same group and storage topics): with two or more, the others take over the outbox task when one dies. Worker n listens on STACK_CONNECT_PORT + n - 1 and logs to connect-n.log (the first: connect.log); each has STACK_CONNECT_HEAP_MB.",
  },
  registryPort: {
    env: 'STACK_REGISTRY_PORT',
    default: '18081',
    parser: port,
    description: 'Apicurio Registry HTTP port; the Confluent-compatible API is at /apis/ccompat/v7.',
  },
  registryManagementPort: {
    env: 'STACK_REGISTRY_MANAGEMENT_PORT',
    default: '18082',
    parser: port,
    description: 'Apicurio Registry management interface (health, metrics; loopback only).',
  },
  kafkaHeapMb: {
    env: 'STACK_KAFKA_HEAP_MB',
    default: '768',
    parser: megabytes,
    description: 'Maximum heap of the Kafka broker.',
  },
  kafkaBrokerCount: {
    env: 'STACK_KAFKA_BROKERS',
    default: '1',
    parser: zInt({ min: 1, max: 9, example: '3' }),
    description:
      "Kafka nodes of the stack's KRaft cluster, each a broker and a controller, every controller a voter of the quorum. Node n has node.id n, listens on STACK_KAFKA_PORT + 2(n - 1) and STACK_KAFKA_CONTROLLER_PORT + 2(n - 1), keeps its data in kafka-n/ and logs to kafka-n.log (node 1: kafka/, kafka.log); each has STACK_KAFKA_HEAP_MB. A node count is fixed when the nodes are first formatted.",
  },
  kafkaReplicationFactor: {
    env: 'STACK_KAFKA_REPLICATION_FACTOR',
    default: 'auto',
    parser: autoOrCount('3'),
    description:
      "Replicas of every topic: the brokers' default.replication.factor (which the event topics, the dead letter topics and the topics Connect creates take), Kafka's internal topics and Connect's storage topics; auto is 3, or STACK_KAFKA_BROKERS when fewer. At most STACK_KAFKA_BROKERS.",
  },
  kafkaMinInsyncReplicas: {
    env: 'STACK_KAFKA_MIN_INSYNC_REPLICAS',
    default: 'auto',
    parser: autoOrCount('2'),
    description:
      "The brokers' min.insync.replicas (and the internal topics'): replicas that must have a write before an acks=all producer, which every producer here is, gets its acknowledgement; auto is one less than the replication factor, at least 1. At most the replication factor.",
  },
  connectHeapMb: {
    env: 'STACK_CONNECT_HEAP_MB',
    default: '768',
    parser: megabytes,
    description: 'Maximum heap of the Kafka Connect worker.',
  },
  registryHeapMb: {
    env: 'STACK_REGISTRY_HEAP_MB',
    default: '512',
    parser: megabytes,
    description: 'Maximum heap of Apicurio Registry.',
  },
  alertmanagerPort: {
    env: 'STACK_ALERTMANAGER_PORT',
    default: '18093',
    parser: port,
    description: 'Alertmanager HTTP port (loopback only); the slot monitor sends its alerts to it.',
  },
  alertmanagerWebhookUrl: {
    env: 'STACK_ALERTMANAGER_WEBHOOK_URL',
    default: '',
    parser: zString({ example: 'http://127.0.0.1:8080/alerts' }),
    description:
      "Where the stack's Alertmanager sends notifications (a webhook, resolved ones too); empty keeps them in Alertmanager only.",
  },
  alertmanagerDeadMansSwitchUrl: {
    env: 'STACK_ALERTMANAGER_DEADMANSSWITCH_URL',
    default: '',
    parser: zString({ example: 'https://hc-ping.com/<uuid>' }),
    description:
      "Where the stack's Alertmanager sends the monitors' Watchdog heartbeats, every minute (a dead man's switch that pages when they stop); empty keeps them in Alertmanager only.",
  },
  prometheusPort: {
    env: 'STACK_PROMETHEUS_PORT',
    default: '18090',
    parser: port,
    description:
      "Prometheus HTTP port (loopback only); it scrapes the monitors and consumers and sends its alerts to the stack's Alertmanager.",
  },
  prometheusTargets: {
    env: 'STACK_PROMETHEUS_TARGETS',
    default: 'yes',
    parser: zBool(),
    description:
      "Whether a long-running program started beside the stack (a consumer, a monitor, the hold sweeper) announces its metrics address to the stack's running Prometheus, which then scrapes it under its job (stack/scrape-targets.ts). Read by the programs; the test suite sets no for the programs it starts.",
  },
  prometheusIntervalMs: {
    env: 'STACK_PROMETHEUS_INTERVAL_MS',
    default: '15000',
    parser: zDurationMs({ min: 1000, example: '15000' }),
    description: "Scrape and rule evaluation interval of the stack's Prometheus. Only read when Prometheus starts.",
  },
  readyTimeoutMs: {
    env: 'STACK_READY_TIMEOUT_MS',
    default: '180000',
    parser: zDurationMs({ min: 1000, example: '180000' }),
    description: 'How long start waits for each component to become healthy before failing with its last log lines.',
  },
});

export type StackSettings = Config<typeof stackSettings.settings>;

/** Where everything of one stack lives on disk, and how to reach it. */
export interface StackLayout {
  settings: StackSettings;
  versions: StackVersions;
  home: string;
  dist: string;
  runDir: string;
  logDir: string;
  kafkaData: string;
}

export function stackLayout(env: NodeJS.ProcessEnv = process.env): StackLayout {
  const settings = parseSettings(stackSettings, env);
  kafkaReplication(settings);
  const home = isAbsolute(settings.home) ? settings.home : join(projectRoot, settings.home);
  return {
    settings,
    versions: readVersions(),
    home,
    dist: isAbsolute(settings.dist) ? settings.dist : join(home, settings.dist),
    runDir: join(home, 'run'),
    logDir: join(home, 'logs'),
    kafkaData: join(home, 'kafka', 'data'),
  };
}

/**
 * The REST ports of the stack's Connect workers: STACK_CONNECT_PORT, then one port up per further
 * worker. A further worker's port that another component of the stack listens on is refused with the fix.
 */
export function connectWorkerPorts(s: StackSettings): number[] {
  const ports = Array.from({ length: s.connectWorkers }, (_, i) => s.connectPort + i);
  const others: [string, number][] = [
    ['STACK_POSTGRES_PORT', s.postgresPort],
    ['STACK_POSTGRES_STANDBY_PORT', s.postgresStandbyPort],
    ['STACK_KAFKA_PORT', s.kafkaPort],
    ['STACK_KAFKA_CONTROLLER_PORT', s.kafkaControllerPort],
    ['STACK_REGISTRY_PORT', s.registryPort],
    ['STACK_REGISTRY_MANAGEMENT_PORT', s.registryManagementPort],
    ['STACK_ALERTMANAGER_PORT', s.alertmanagerPort],
    ['STACK_PROMETHEUS_PORT', s.prometheusPort],
  ];
  for (const [env, taken] of others) {
    if (ports.slice(1).includes(taken)) {
      throw new Error(
        `STACK_CONNECT_WORKERS=${s.connectWorkers} puts a Connect worker on port ${taken}, which ${env} already uses (workers listen on STACK_CONNECT_PORT=${s.connectPort} and the next ${s.connectWorkers - 1} ports): choose fewer workers or another STACK_CONNECT_PORT or ${env}`,
      );
    }
  }
  return ports;
}

/** One node of the stack's KRaft cluster (STACK_KAFKA_BROKERS): a broker and a controller in one process. */
export interface KafkaNode {
  nodeId: number;
  /** `kafka` for node 1 (the single-node stack's names), `kafka-<n>` for the others: component, log and pid file. */
  name: string;
  port: number;
  controllerPort: number;
  /** Its server.properties lives here. */
  home: string;
  dataDir: string;
}

/** The nodes of the stack's Kafka cluster; node n listens on STACK_KAFKA_PORT + 2(n - 1) and STACK_KAFKA_CONTROLLER_PORT + 2(n - 1). */
export function kafkaNodes(layout: StackLayout): KafkaNode[] {
  const s = layout.settings;
  return Array.from({ length: s.kafkaBrokerCount }, (_, i) => {
    const nodeId = i + 1;
    const home = join(layout.home, nodeId === 1 ? 'kafka' : `kafka-${nodeId}`);
    return {
      nodeId,
      name: nodeId === 1 ? 'kafka' : `kafka-${nodeId}`,
      port: s.kafkaPort + 2 * i,
      controllerPort: s.kafkaControllerPort + 2 * i,
      home,
      dataDir: nodeId === 1 ? layout.kafkaData : join(home, 'data'),
    };
  });
}

/**
 * The replication every topic gets from STACK_KAFKA_REPLICATION_FACTOR and
 * STACK_KAFKA_MIN_INSYNC_REPLICAS, their `auto` worked out; a value the cluster cannot honour, or
 * further nodes on ports other components use, stop with the fix.
 */
export function kafkaReplication(s: StackSettings): { replicationFactor: number; minInsyncReplicas: number } {
  const brokers = s.kafkaBrokerCount;
  const replicationFactor = s.kafkaReplicationFactor === 'auto' ? Math.min(3, brokers) : s.kafkaReplicationFactor;
  const minInsyncReplicas =
    s.kafkaMinInsyncReplicas === 'auto' ? Math.max(1, replicationFactor - 1) : s.kafkaMinInsyncReplicas;
  const problems: string[] = [];
  if (replicationFactor > brokers) {
    problems.push(
      `STACK_KAFKA_REPLICATION_FACTOR is ${replicationFactor} but the cluster has ${brokers} broker(s) (STACK_KAFKA_BROKERS): set it to at most ${brokers}, or to auto, or run more brokers.`,
    );
  }
  if (minInsyncReplicas > replicationFactor) {
    problems.push(
      `STACK_KAFKA_MIN_INSYNC_REPLICAS is ${minInsyncReplicas}, more than the replication factor ${replicationFactor}: no write could ever be acknowledged; set it to at most ${replicationFactor}, or to auto.`,
    );
  }
  const further = Array.from({ length: brokers - 1 }, (_, i) => [
    s.kafkaPort + 2 * (i + 1),
    s.kafkaControllerPort + 2 * (i + 1),
  ]).flat();
  const others: [string, number][] = [
    ['STACK_POSTGRES_PORT', s.postgresPort],
    ['STACK_POSTGRES_STANDBY_PORT', s.postgresStandbyPort],
    ['STACK_KAFKA_PORT', s.kafkaPort],
    ['STACK_KAFKA_CONTROLLER_PORT', s.kafkaControllerPort],
    ['STACK_CONNECT_PORT', s.connectPort],
    ['STACK_REGISTRY_PORT', s.registryPort],
    ['STACK_REGISTRY_MANAGEMENT_PORT', s.registryManagementPort],
    ['STACK_ALERTMANAGER_PORT', s.alertmanagerPort],
    ['STACK_PROMETHEUS_PORT', s.prometheusPort],
  ];
  for (const [env, taken] of others) {
    if (further.includes(taken)) {
      problems.push(
        `STACK_KAFKA_BROKERS=${brokers} puts a Kafka node on port ${taken}, which ${env} already uses (node n listens on STACK_KAFKA_PORT and STACK_KAFKA_CONTROLLER_PORT plus 2(n - 1)): choose another ${env} or STACK_KAFKA_PORT.`,
      );
    }
  }
  if (problems.length > 0) throw new ConfigError('stack', problems);
  return { replicationFactor, minInsyncReplicas };
}

/** Connection facts every program and test uses to reach the stack. */
export function stackEndpoints(layout: StackLayout) {
  const s = layout.settings;
  // With a standby, clients reach the seat database through the primary endpoint, which follows a failover.
  const clientPort = s.postgresStandby ? s.postgresEndpointPort : s.postgresPort;
  return {
    postgresAdminUrl: `postgres://postgres:postgres@127.0.0.1:${clientPort}/postgres`,
    postgresPort: clientPort,
    /** The primary cluster's own port (STACK_POSTGRES_PORT): the outbox connector's, which the failover command moves explicitly. */
    postgresPrimaryPort: s.postgresPort,
    /** The standby's admin URL (only when STACK_POSTGRES_STANDBY is yes). */
    postgresStandbyAdminUrl: `postgres://postgres:postgres@127.0.0.1:${s.postgresStandbyPort}/postgres`,
    kafkaBrokers: kafkaNodes(layout).map((node) => `127.0.0.1:${node.port}`),
    connectUrl: `http://127.0.0.1:${s.connectPort}`,
    /** The first worker with the local stack's REST user (LOCAL_CONNECT_USER): what the Connect client takes. */
    connect: localConnectApi(`http://127.0.0.1:${s.connectPort}`),
    /** Every Connect worker's REST API, the first being connectUrl (any worker forwards to the leader). */
    connectUrls: connectWorkerPorts(s).map((p) => `http://127.0.0.1:${p}`),
    registryUrl: `http://127.0.0.1:${s.registryPort}/apis/ccompat/v7`,
    alertmanagerUrl: `http://127.0.0.1:${s.alertmanagerPort}`,
    prometheusUrl: `http://127.0.0.1:${s.prometheusPort}`,
  };
}

export const startHint = 'npm run stack -- start';

/**
 * Passwords of the seat database roles on the local stack only: a loopback-only cluster with
 * throwaway data. The programs have no default passwords; whatever runs them on this stack (the
 * rehearsal, the tests, the launcher for Connect's environment) passes these explicitly.
 */
export const LOCAL_ROLE_PASSWORDS = {
  service: 'stagefront_service',
  debezium: 'stagefront_debezium',
  consumer: 'stagefront_consumer',
} as const;

/**
 * The Kafka Connect REST API's one user on the local stack only (loopback-only workers): the
 * launcher writes it into the workers' REST users file, and whatever calls Connect on this stack
 * (the rehearsal, the tests, the bench, the launcher's health check) signs in with it. The
 * programs have no default for CONNECT_USERNAME or CONNECT_PASSWORD.
 */
export const LOCAL_CONNECT_USER = { username: 'stagefront-connect', password: 'stagefront_connect_local' } as const;

/** Workers at `connectUrl` (one or several, comma separated) signed in to as LOCAL_CONNECT_USER. */
export function localConnectApi(connectUrl: string): ConnectApi {
  return { connectUrl, connectUsername: LOCAL_CONNECT_USER.username, connectPassword: LOCAL_CONNECT_USER.password };
}

/** LOCAL_CONNECT_USER as the programs' settings. */
export const LOCAL_CONNECT_ENV = {
  CONNECT_USERNAME: LOCAL_CONNECT_USER.username,
  CONNECT_PASSWORD: LOCAL_CONNECT_USER.password,
} as const;

/**
 * The environment the seat service, hold sweeper and connector command need on the local stack,
 * its passwords included: what the rehearsal passes them (the programs themselves have no
 * default for any password).
 */
export function localStackProgramEnv(layout: StackLayout): Record<string, string> {
  const endpoints = stackEndpoints(layout);
  const seatDatabase = (user: string, password: string, port = endpoints.postgresPort) =>
    `postgres://${user}:${password}@127.0.0.1:${port}/stagefront`;
  return {
    // Where the programs find the stack's Prometheus to announce their metrics to (stack/scrape-targets.ts).
    STACK_HOME: layout.home,
    SEAT_DB_URL: seatDatabase('stagefront_service', LOCAL_ROLE_PASSWORDS.service),
    SEAT_DB_ADMIN_URL: endpoints.postgresAdminUrl.replace(/\/postgres$/, '/stagefront'),
    SEAT_SERVICE_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.service,
    DEBEZIUM_DB_PASSWORD: LOCAL_ROLE_PASSWORDS.debezium,
    // Debezium reads the primary's slot on the primary itself (never through the endpoint): the failover command moves it.
    CONNECTOR_SEAT_DB_URL: seatDatabase(
      'stagefront_debezium',
      LOCAL_ROLE_PASSWORDS.debezium,
      endpoints.postgresPrimaryPort,
    ),
    SEAT_DB_PORT: String(endpoints.postgresPrimaryPort),
    SCHEMA_REGISTRY_URL: endpoints.registryUrl,
    KAFKA_BROKERS: endpoints.kafkaBrokers.join(','),
    CONNECT_URL: endpoints.connectUrl,
    ...LOCAL_CONNECT_ENV,
    // With a standby, Debezium's slot is a failover slot, synchronized to the standby.
    ...(layout.settings.postgresStandby ? { CONNECTOR_SLOT_FAILOVER: 'yes' } : {}),
  };
}

/**
 * `npm run stack -- env`: the local stack's program settings as shell exports, so that
 * `eval "$(npm run -s stack -- env)"` gives a shell every setting the seat service, the connector
 * command, the monitors and a consumer need against this stack (the local passwords included: they
 * are the stack's own, known to anyone with this checkout, and reach loopback only).
 */
export function localStackShellEnv(layout: StackLayout): string {
  const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
  const lines = [
    '# The local stack\'s settings for its programs: eval "$(npm run -s stack -- env)"',
    ...Object.entries(localStackProgramEnv(layout)).map(([name, value]) => `export ${name}=${quote(value)}`),
  ];
  if (layout.settings.kafkaSecurity !== 'plaintext')
    lines.push(
      '# Kafka takes only SCRAM users with ACLs here (STACK_KAFKA_SECURITY): give a program the KAFKA_* settings of its own user (docs/stack.md, Kafka with TLS, SCRAM users and ACLs).',
    );
  return `${lines.join('\n')}\n`;
}
