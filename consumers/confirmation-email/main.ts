/** `npm run consumer:confirmation-email [-- --help]` */
import { runConsumerProgram } from '../runtime/index.js';
import { confirmationEmailConsumer, confirmationEmailSettings } from './consumer.js';
import { createSmtpTransport } from './send-confirmation.js';

runConsumerProgram(confirmationEmailSettings, (config) => {
  const transport = createSmtpTransport(config);
  return {
    definition: confirmationEmailConsumer(
      config.groupId,
      config.topicPrefix,
      transport,
      config.mailFrom,
      config.claimAbandonedAfterMs,
      config.sendConcurrency,
    ),
    release: () => transport.close(),
  };
});
