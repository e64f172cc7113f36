import { createLogger } from '../lib/logger.js';
import { redactConnectionString } from '../lib/postgres.js';
import { settingsHelp } from '../lib/settings.js';
import { connectorSettings } from '../connectors/settings.js';
import { parseSettings } from '../lib/settings.js';
import { localStackProgramEnv, localStackShellEnv, stackEndpoints, stackLayout, stackSettings } from './config.js';
import { KAFKA_CONNECTOR_COMMAND_USER } from '../lib/kafka-access.js';
import { localKafkaClientEnv } from './kafka-security.js';
import { failOver } from './failover.js';
import { stackComponents, stackStatus, startStack, stopStack } from './launcher.js';
import { Supervisor, claimSupervision, refuseWhileSupervised, supervisedComponent } from './supervisor.js';

const USAGE = `Usage: npm run stack -- <start|stop|status|supervise|env|failover>

  start   start what is missing of the native stack (Postgres, Kafka, Kafka Connect with
          Debezium, Apicurio Registry) and wait until each answers; reuses what runs
  stop    stop every process the stack started
  supervise
          start what is missing, then keep the stack running until Ctrl-C: any component
          that dies is started again at once (one that keeps dying, after a pause that
          doubles up to 30 s); Ctrl-C stops the watching, the stack keeps running
  status  each component, its port, its health, its memory (each Connect worker of
          STACK_CONNECT_WORKERS on a line of its own: connect, connect-2, …)
  env     the settings the project's programs need against this stack, as shell exports:
          eval "$(npm run -s stack -- env)" (SEAT_DB_URL, SEAT_DB_ADMIN_URL, KAFKA_BROKERS…)
  failover [--stop-primary]
          (STACK_POSTGRES_STANDBY=yes) promote the standby, move the outbox connector to it
          (the connector command's settings: CONNECTOR_NAME, SLOT_NAME…; the local stack's by
          default) and wait until its task runs and its slot is active on the new primary.
          Refuses while the primary answers; --stop-primary stops it cleanly first (switchover)

Settings (environment variables):
`;

async function main(argv: string[]): Promise<number> {
  const command = argv[0];
  if (command === undefined || command === '--help' || command === '-h') {
    console.log(USAGE + settingsHelp(stackSettings));
    return command === undefined ? 2 : 0;
  }
  const logger = createLogger({ name: 'stack' });
  const layout = stackLayout();
  // These stop or start components: under a supervisor's watch they would fight it.
  if (command === 'start' || command === 'stop' || command === 'failover')
    refuseWhileSupervised(layout, `npm run stack -- ${command}`);
  switch (command) {
    case 'start': {
      const began = Date.now();
      await startStack(logger, layout);
      const endpoints = stackEndpoints(layout);
      logger.info(
        {
          seconds: (Date.now() - began) / 1000,
          ...endpoints,
          postgresAdminUrl: redactConnectionString(endpoints.postgresAdminUrl),
        },
        'stack is up',
      );
      return 0;
    }
    case 'stop':
      await stopStack(logger, layout);
      return 0;
    case 'supervise': {
      const unclaim = claimSupervision(layout);
      await startStack(logger, layout);
      const supervisor = new Supervisor(logger);
      const watched = stackComponents(layout).filter((part) =>
        supervisor.watch(supervisedComponent(part, layout, logger)),
      );
      supervisor.start();
      logger.info({ components: watched.map((c) => c.name) }, 'supervising the stack: Ctrl-C stops the watching');
      // The supervisor's own timer keeps nothing alive: this command lives until the signal.
      const alive = setInterval(() => undefined, 60_000);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      clearInterval(alive);
      await supervisor.stop();
      unclaim();
      logger.info({ restarts: supervisor.restarts().length }, 'no longer supervising; the stack keeps running');
      return 0;
    }
    case 'status': {
      const rows = await stackStatus(layout);
      for (const row of rows) {
        const state = row.healthy ? 'healthy' : row.pid === undefined ? 'stopped' : 'unhealthy';
        const memory = row.residentMb === undefined ? '' : `${row.residentMb} MB`;
        console.log(
          `${row.name.padEnd(13)} ${String(row.port).padEnd(6)} ${state.padEnd(10)} pid ${String(row.pid ?? '-').padEnd(8)} ${memory.padEnd(8)} ${row.logFile}`,
        );
      }
      return rows.every((r) => r.healthy) ? 0 : 1;
    }
    case 'env':
      process.stdout.write(localStackShellEnv(layout));
      return 0;
    case 'failover': {
      // The connector's own settings, the local stack's where the environment does not say.
      const connector = parseSettings(connectorSettings, {
        ...localStackProgramEnv(layout),
        ...localKafkaClientEnv(layout, KAFKA_CONNECTOR_COMMAND_USER),
        ...process.env,
      });
      const report = await failOver(layout, connector, logger, { stopPrimary: argv.includes('--stop-primary') });
      console.log(
        `seat database: primary on port ${report.newPrimaryPort}, timeline ${report.timeline}${report.promoted ? ' (promoted now)' : ' (promoted before)'}\n` +
          `connector ${connector.connectorName}: ${report.connector.connector.state}, tasks ${report.connector.tasks.map((t) => t.state).join(', ')}\n` +
          `slot ${connector.slotName}: active, failover ${report.slotAfter.failover}, confirmed_flush_lsn ${report.slotAfter.confirmedFlushLsn ?? '-'}\n` +
          `done in ${report.seconds.toFixed(1)} s. The stack's programs follow through the primary endpoint (port ${layout.settings.postgresEndpointPort}); ` +
          `anything pointed at a node directly goes to port ${report.newPrimaryPort} (SEAT_DB_URL, SEAT_DB_PORT, CONNECTOR_SEAT_DB_URL, the monitors' URLs).`,
      );
      return 0;
    }
    default:
      console.error(`unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
