/** `npm run consumer:sales-ledger [-- --help]` */
import { runConsumerProgram } from '../runtime/index.js';
import { salesLedgerConsumer, salesLedgerSettings } from './consumer.js';

runConsumerProgram(salesLedgerSettings, (config) => ({
  definition: salesLedgerConsumer(config.groupId, config.topicPrefix),
}));
