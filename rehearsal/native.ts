/**
 * The native rehearsal environment: the native stack, the seat and consumer databases prepared,
 * the outbox connector applied, a local email provider (its own process, 100 ms a message), and the rehearsal's programs (three consumers,
 * the hold sweeper, the slot monitor and the job watchdog), each its own process.
 */
import { applyOutboxConnector, outboxTopics } from '../connectors/outbox-connector.js';
import { connectorSettings } from '../connectors/settings.js';
import { kafkaSecurityEnv } from '../lib/kafka-security.js';
import type { Logger } from '../lib/logger.js';
import { createPool } from '../lib/postgres.js';
import { parseSettings } from '../lib/settings.js';
import { waitFor } from '../lib/wait.js';
import { seatServiceSettings } from '../seat-service/settings.js';
import { SWEEPER_JOB } from '../seat-service/sweeper.js';
import { LOCAL_ROLE_PASSWORDS, localStackProgramEnv, stackEndpoints, stackLayout } from '../stack/config.js';
import { KAFKA_CONNECTOR_COMMAND_USER } from '../lib/kafka-access.js';
import { localKafkaClientEnv } from '../stack/kafka-security.js';
import { stackComponents, startStack } from '../stack/launcher.js';
import { Supervisor, claimSupervision, refuseWhileSupervised, supervisedComponent } from '../stack/supervisor.js';
import { REHEARSAL_ROLES, prepareRehearsalDatabases } from './databases.js';
import type { RehearsalEnvironment } from './environment.js';
import { spawnProvider } from '../bench/provider/client.js';
import { ProgramSet, type ProgramSpec } from './programs.js';
import type { RehearsalConfig } from './settings.js';

const CONSUMER_ROLE = REHEARSAL_ROLES.consumer;
const CONSUMER_PROGRAMS = ['seat-availability', 'confirmation-email', 'sales-ledger'] as const;
const SWEEPER = 'hold-sweeper';
const WATCHDOG = 'job-watchdog';
const SLOT_MONITOR = 'slot-monitor';
/** Instance n of a consumer serves its metrics this much above the first's port. */
const INSTANCE_PORT_STEP = 100;

/** The program names of a consumer's instances: the first has the consumer's name, instance n `<name>-n`. */
function consumerInstanceNames(consumer: string, instances: number): string[] {
  return Array.from({ length: instances }, (_, i) => (i === 0 ? consumer : `${consumer}-${i + 1}`));
}

/** Each consumer's spec copied for its further instances: a name and a metrics port of their own. */
function withInstances(specs: Record<string, ProgramSpec>, instances: number): Record<string, ProgramSpec> {
  const copies = CONSUMER_PROGRAMS.flatMap((consumer) => {
    const first = specs[consumer];
    if (first === undefined) return [];
    return consumerInstanceNames(consumer, instances)
      .slice(1)
      .map((name, i): [string, ProgramSpec] => {
        const readyPort = first.readyPort + INSTANCE_PORT_STEP * (i + 1);
        return [name, { ...first, name, readyPort, env: { ...first.env, METRICS_PORT: String(readyPort) } }];
      });
  });
  return { ...specs, ...Object.fromEntries(copies) };
}

function withCredentials(url: string, user: string, password: string): string {
  const parsed = new URL(url);
  parsed.username = user;
  parsed.password = password;
  return parsed.toString();
}

interface ProgramUrls {
  /** KAFKA_BROKERS and SCHEMA_REGISTRY_URL of the stack the rehearsal started (its ports may be moved). */
  stackEnv: Record<string, string>;
  /** A secured local stack's KAFKA_SECURITY_* environment of a program's own Kafka user, over the rehearsal's own settings (absent or empty: those). */
  kafkaEnv?: (user: string) => Record<string, string>;
  consumerDbUrl: string;
  seatAdminUrl: string;
  seatServiceUrl: string;
  alertmanagerUrl: string;
  /**
   * With a standby: the seat database's nodes on their own ports (primary first). The slot monitor
   * watches them directly (whichever is not in recovery is the primary), not through the endpoint.
   */
  seatNodePorts?: number[];
}

/**
 * The consumers, the hold sweeper and the two watchers, with their settings; ports are the
 * programs' defaults (Prometheus scrapes them). The consumers reach Kafka as the rehearsal's
 * KAFKA_SECURITY_* settings say.
 */
function programSpecs(urls: ProgramUrls, config: RehearsalConfig): Record<string, ProgramSpec> {
  const common = {
    ...urls.stackEnv,
    ...kafkaSecurityEnv(config),
    CONSUMER_DATABASE_URL: urls.consumerDbUrl,
    LOG_LEVEL: 'warn',
  };
  const ownUser = (user: string) => urls.kafkaEnv?.(user) ?? {};
  const asRole = (role: string) => withCredentials(urls.seatAdminUrl, role, role);
  const onNode = (url: string, port: number) => {
    const parsed = new URL(url);
    parsed.port = String(port);
    return parsed.toString();
  };
  const [primaryPort, ...standbyPorts] = urls.seatNodePorts ?? [];
  const slotMonitorNodes =
    primaryPort === undefined
      ? {}
      : {
          SLOT_MONITOR_DATABASE_URL: onNode(asRole('slot_monitor'), primaryPort),
          SLOT_MONITOR_STANDBY_URLS: standbyPorts.map((p) => onNode(asRole('slot_monitor'), p)).join(','),
        };
  return {
    'seat-availability': {
      name: 'seat-availability',
      entry: 'consumers/seat-availability/main.ts',
      env: { ...common, ...ownUser('seat-availability') },
      readyPort: 9471,
    },
    'confirmation-email': {
      name: 'confirmation-email',
      entry: 'consumers/confirmation-email/main.ts',
      env: { ...common, ...ownUser('confirmation-email'), SMTP_HOST: '127.0.0.1', SMTP_PORT: String(config.smtpPort) },
      readyPort: 9472,
    },
    'sales-ledger': {
      name: 'sales-ledger',
      entry: 'consumers/sales-ledger/main.ts',
      env: { ...common, ...ownUser('sales-ledger') },
      readyPort: 9473,
    },
    [SWEEPER]: {
      name: SWEEPER,
      entry: 'seat-service/sweeper-main.ts',
      env: {
        ...urls.stackEnv,
        SEAT_DB_URL: urls.seatServiceUrl,
        HOLD_SWEEPER_INTERVAL_MS: String(config.sweepIntervalMs),
        LOG_LEVEL: 'warn',
      },
      readyPort: 9190,
    },
    [WATCHDOG]: {
      name: WATCHDOG,
      entry: 'monitors/job-watchdog/main.ts',
      env: {
        JOB_WATCHDOG_DATABASE_URL: asRole('job_watchdog'),
        JOB_WATCHDOG_JOBS: `${SWEEPER_JOB}=${config.sweepIntervalMs}:${config.sweepIntervalMs * 10}`,
        JOB_WATCHDOG_POLL_INTERVAL_MS: '1000',
        JOB_WATCHDOG_ALERTMANAGER_URL: urls.alertmanagerUrl,
      },
      readyPort: 9189,
    },
    [SLOT_MONITOR]: {
      name: SLOT_MONITOR,
      entry: 'monitors/slot-monitor/main.ts',
      env: {
        SLOT_MONITOR_DATABASE_URL: asRole('slot_monitor'),
        SLOT_MONITOR_ALERTMANAGER_URL: urls.alertmanagerUrl,
        SLOT_MONITOR_SLOTS: 'stagefront_outbox',
        SLOT_MONITOR_POLL_INTERVAL_MS: '2000',
        ...slotMonitorNodes,
      },
      readyPort: 9188,
    },
  };
}

/** Waits until the sweeper started at `since` has claimed a run of its own. */
async function firstSweep(seatAdminUrl: string, since: Date, logger: Logger): Promise<void> {
  const pool = createPool({ connectionString: seatAdminUrl, applicationName: 'rehearsal-setup', logger, max: 1 });
  try {
    await waitFor(
      async () => {
        const { rows } = await pool.query<{ n: number }>(
          `select count(*)::int as n from job_runs where job_name = $1 and started_at >= $2`,
          [SWEEPER_JOB, since],
        );
        return (rows[0]?.n ?? 0) > 0;
      },
      {
        timeoutMs: 60_000,
        intervalMs: 200,
        description: `the hold sweeper to claim its first run (job_runs, job ${SWEEPER_JOB})`,
      },
    );
  } finally {
    await pool.end();
  }
}

async function databaseNow(url: string, logger: Logger): Promise<Date> {
  const pool = createPool({ connectionString: url, applicationName: 'rehearsal-setup', logger, max: 1 });
  try {
    return (await pool.query<{ now: Date }>('select now() as now')).rows[0]?.now ?? new Date();
  } finally {
    await pool.end();
  }
}

export async function openNativeEnvironment(config: RehearsalConfig, logger: Logger): Promise<RehearsalEnvironment> {
  const layout = stackLayout();
  const endpoints = stackEndpoints(layout);
  // The rehearsal supervises the stack itself, and its drills kill parts: a second supervisor would fight both.
  refuseWhileSupervised(layout, 'npm run rehearsal');
  await startStack(logger, layout);
  // The local stack's own passwords, passed explicitly: the programs have no default for any.
  const localEnv = localStackProgramEnv(layout);
  const seatConfig = parseSettings(seatServiceSettings, {
    ...process.env,
    ...localEnv,
    HOLD_TTL_MS: String(config.holdTtlMs),
  });
  const consumerAdminUrl = seatConfig.adminDatabaseUrl.replace(/\/[^/]+$/, '/stagefront_consumers');
  await prepareRehearsalDatabases(
    {
      seatAdminUrl: seatConfig.adminDatabaseUrl,
      consumerAdminUrl,
      passwords: {
        ...LOCAL_ROLE_PASSWORDS,
        slotMonitor: REHEARSAL_ROLES.slotMonitor,
        jobWatchdog: REHEARSAL_ROLES.jobWatchdog,
      },
      applicationName: 'rehearsal-setup',
    },
    logger,
  );
  // A secured local stack (STACK_KAFKA_SECURITY=sasl_ssl) gives the connector command its own user over the rehearsal's settings.
  const connector = parseSettings(connectorSettings, {
    ...process.env,
    ...localEnv,
    ...kafkaSecurityEnv(config),
    ...localKafkaClientEnv(layout, KAFKA_CONNECTOR_COMMAND_USER),
  });
  await applyOutboxConnector(connector, logger);

  const programs = new ProgramSet(layout.logDir);
  // The consumers log in as their own role, the owner of their database, never as the superuser.
  const specs = withInstances(
    programSpecs(
      {
        stackEnv: {
          KAFKA_BROKERS: localEnv.KAFKA_BROKERS ?? '',
          SCHEMA_REGISTRY_URL: localEnv.SCHEMA_REGISTRY_URL ?? '',
        },
        kafkaEnv: (user) => localKafkaClientEnv(layout, user),
        consumerDbUrl: withCredentials(consumerAdminUrl, CONSUMER_ROLE, LOCAL_ROLE_PASSWORDS.consumer),
        seatAdminUrl: seatConfig.adminDatabaseUrl,
        seatServiceUrl: seatConfig.databaseUrl,
        alertmanagerUrl: endpoints.alertmanagerUrl,
        ...(layout.settings.postgresStandby
          ? { seatNodePorts: [layout.settings.postgresPort, layout.settings.postgresStandbyPort] }
          : {}),
      },
      config,
    ),
    config.consumerInstances,
  );
  const instancesOf = (consumer: string) => consumerInstanceNames(consumer, config.consumerInstances);
  const spec = (name: string): ProgramSpec => {
    const found = specs[name];
    if (found === undefined) throw new Error(`no program ${name}`);
    return found;
  };
  // Started last before the try that stops it on a failure: nothing between can leave it running.
  const mail = await spawnProvider({ smtpPort: config.smtpPort, acceptDelayMs: config.smtpAcceptDelayMs });
  try {
    const sweeperSince = await databaseNow(seatConfig.adminDatabaseUrl, logger);
    await Promise.all(
      [...CONSUMER_PROGRAMS.flatMap(instancesOf), SWEEPER, SLOT_MONITOR].map((name) => programs.start(spec(name))),
    );
    // The watchdog starts once the sweeper has run: started earlier it would judge the age of the
    // previous rehearsal's last run and raise JobRunOverdue at once.
    await firstSweep(seatConfig.adminDatabaseUrl, sweeperSince, logger);
    await programs.start(spec(WATCHDOG));
  } catch (err) {
    await programs.stopAll([WATCHDOG]);
    await mail.stop();
    throw err;
  }
  // From here on, whatever dies is started again at once, the stack's components and the programs.
  let unclaim: () => void;
  try {
    unclaim = claimSupervision(layout);
  } catch (err) {
    await programs.stopAll([WATCHDOG]);
    await mail.stop();
    throw err;
  }
  const supervisor = new Supervisor(logger);
  for (const part of stackComponents(layout)) supervisor.watch(supervisedComponent(part, layout, logger));
  for (const name of programs.names()) supervisor.watch(programs.supervised(name));
  supervisor.start();

  return {
    mode: 'native',
    seatConfig,
    seatAdminUrl: seatConfig.adminDatabaseUrl,
    consumerAdminUrl,
    alertmanagerUrl: endpoints.alertmanagerUrl,
    slotName: connector.slotName,
    emailMessageIds: () => mail.messageIds(),
    drillContext: (downMs, drillLogger) => ({
      layout,
      programs,
      consumers: CONSUMER_PROGRAMS,
      instancesOf,
      topics: outboxTopics(connector.topicPrefix),
      sweeper: SWEEPER,
      consumerAdminUrl,
      // Every worker: a call goes to the first that answers, so the drill reads Connect while one is down.
      connect: { ...connector, connectUrl: endpoints.connectUrls.join(',') },
      connectorName: connector.connectorName,
      connector,
      downMs,
      supervisor,
      logger: drillLogger,
    }),
    unplannedRestarts: () => supervisor.restarts().filter((r) => r.cause === 'died'),
    logFiles: () => programs.logFiles(),
    async close(keepRunning) {
      await supervisor.stop();
      unclaim();
      if (keepRunning) return;
      // The watchdog first: stopped after the sweeper it would see the sweeper's runs stop.
      await programs.stopAll([WATCHDOG, SLOT_MONITOR, SWEEPER]);
      await mail.stop();
    },
  };
}
