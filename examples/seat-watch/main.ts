/** `node --import tsx examples/seat-watch/main.ts [--help | --env-example]` */
import { runConsumerProgram } from '../../consumers/runtime/index.js';
import { seatWatchConsumer, seatWatchSettings } from './consumer.js';

runConsumerProgram(seatWatchSettings, (config) => ({ definition: seatWatchConsumer(config) }));
