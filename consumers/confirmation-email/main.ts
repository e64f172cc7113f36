/** `npm run consumer:confirmation-email [-- --help]` */
import { runConsumerProgram } from '../runtime/index.js';
import { confirmationEmailConsumer, confirmationEmailSettings } from './consumer.js';
import { createEmailSender } from './send-confirmation.js';

runConsumerProgram(confirmationEmailSettings, (config) => {
  const sender = createEmailSender(config);
  return {
    definition: confirmationEmailConsumer(config.groupId, config.topicPrefix, sender, config.claimAbandonedAfterMs),
    release: () => sender.close(),
  };
});
