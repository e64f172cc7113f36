import { startProgram } from '../lib/cli.js';
import type { Logger } from '../lib/logger.js';
import { parseArgs } from 'node:util';
import { restartFailed } from './connect-client.js';
import { type DeleteOptions, runDelete } from './connector-delete.js';
import { connectorHealth } from './connector-health.js';
import {
  KUBERNETES_CONNECT_CLUSTER,
  applyOutboxConnector,
  renderOutboxConnector,
  renderOutboxKafkaConnector,
  type ConnectorConfig,
} from './outbox-connector.js';
import { connectorSettings } from './settings.js';

const USAGE = `Usage: npm run connector -- <command>

  apply    create the event topics, create or update the outbox connector, wait until it runs
           (fails with the task's trace when it does not start)
  status   the connector's and its task's state, and its replication slot's; fails (exit 1) when
           the task is not RUNNING, or is RUNNING while its slot is lost, missing or without reader
           (Debezium retries a lost slot for about 30 minutes), naming the command to run
  restart  restart the connector and its failed tasks, then wait until they run
  render   print the configuration that apply would send (it holds no password, only the
           config provider reference Connect resolves)
           --kubernetes[=<KafkaConnect>]: the same as a Strimzi KafkaConnector resource (JSON,
           which is YAML) for that KafkaConnect (default ${KUBERNETES_CONNECT_CLUSTER}); npm run
           k8s:render writes it into deploy/kubernetes/
  delete   say what it would remove (the connector, its replication slot and the WAL the slot
           retains) and refuse (exit 2) unless --yes is given: then delete the connector and drop
           its slot once the task has let go of it, so no orphan slot retains WAL
           --yes: do it; --keep-slot: leave the slot (a connector re-created at once resumes from it)`;

function deleteFlags(args: string[]): DeleteOptions | undefined {
  try {
    const { values } = parseArgs({
      args,
      options: { yes: { type: 'boolean', default: false }, 'keep-slot': { type: 'boolean', default: false } },
    });
    return { yes: values.yes, keepSlot: values['keep-slot'] };
  } catch {
    return undefined;
  }
}

async function main(config: ConnectorConfig, args: string[], logger: Logger): Promise<number> {
  switch (args[0]) {
    case 'apply':
      console.log(JSON.stringify(await applyOutboxConnector(config, logger), null, 2));
      return 0;
    case 'status': {
      const health = await connectorHealth(config, logger);
      if (health === undefined) {
        console.error(`connector ${config.connectorName} does not exist; create it with: npm run connector -- apply`);
        return 1;
      }
      console.log(JSON.stringify({ ...health.status, slot: health.slot }, null, 2));
      if (health.problem === undefined) return 0;
      console.error(`connector ${config.connectorName} is failing: ${health.problem}`);
      return 1;
    }
    case 'restart':
      await restartFailed(config, config.connectorName);
      console.log(JSON.stringify(await applyOutboxConnector(config, logger), null, 2));
      return 0;
    case 'render': {
      const kubernetes = args.slice(1).find((arg) => arg === '--kubernetes' || arg.startsWith('--kubernetes='));
      if (kubernetes === undefined) {
        console.log(JSON.stringify(renderOutboxConnector(config), null, 2));
        return 0;
      }
      const connectCluster = kubernetes.includes('=')
        ? kubernetes.slice(kubernetes.indexOf('=') + 1)
        : KUBERNETES_CONNECT_CLUSTER;
      console.log(JSON.stringify(renderOutboxKafkaConnector(config, connectCluster), null, 2));
      return 0;
    }
    case 'delete': {
      const flags = deleteFlags(args.slice(1));
      if (flags === undefined) {
        console.error(USAGE);
        return 2;
      }
      return runDelete(config, flags, logger, (line) => console.log(line));
    }
    default:
      console.error(USAGE);
      return 2;
  }
}

startProgram({ settings: connectorSettings, usage: USAGE, main });
