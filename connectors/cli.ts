import { startProgram } from '../lib/cli.js';
import type { Logger } from '../lib/logger.js';
import { connectorStatus, deleteConnector, restartFailed } from './connect-client.js';
import { applyOutboxConnector, renderOutboxConnector, type ConnectorConfig } from './outbox-connector.js';
import { connectorSettings } from './settings.js';

const USAGE = `Usage: npm run connector -- <command>

  apply    create the event topics, create or update the outbox connector, wait until it runs
           (fails with the task's trace when it does not start)
  status   the connector's and its task's state
  restart  restart the connector and its failed tasks, then wait until they run
  render   print the configuration that apply would send (password hidden)
  delete   remove the connector (its slot stays: drop it in Postgres if it is not coming back)`;

async function main(config: ConnectorConfig, args: string[], logger: Logger): Promise<number> {
  switch (args[0]) {
    case 'apply':
      console.log(JSON.stringify(await applyOutboxConnector(config, logger), null, 2));
      return 0;
    case 'status': {
      const status = await connectorStatus(config.connectUrl, config.connectorName);
      if (status === undefined) {
        console.error(`connector ${config.connectorName} does not exist; create it with: npm run connector -- apply`);
        return 1;
      }
      console.log(JSON.stringify(status, null, 2));
      return status.connector.state === 'RUNNING' && status.tasks.every((t) => t.state === 'RUNNING') ? 0 : 1;
    }
    case 'restart':
      await restartFailed(config.connectUrl, config.connectorName);
      console.log(JSON.stringify(await applyOutboxConnector(config, logger), null, 2));
      return 0;
    case 'render': {
      const rendered = renderOutboxConnector(config);
      rendered['database.password'] = '***';
      console.log(JSON.stringify(rendered, null, 2));
      return 0;
    }
    case 'delete':
      await deleteConnector(config.connectUrl, config.connectorName);
      return 0;
    default:
      console.error(USAGE);
      return 2;
  }
}

startProgram({ settings: connectorSettings, usage: USAGE, main });
