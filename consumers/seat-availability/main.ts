/** `npm run consumer:seat-availability [-- --help]` */
import { runConsumerProgram } from '../runtime/index.js';
import { seatAvailabilityConsumer, seatAvailabilitySettings } from './consumer.js';

runConsumerProgram(seatAvailabilitySettings, (config) => ({
  definition: seatAvailabilityConsumer(config.groupId, config.topicPrefix),
}));
