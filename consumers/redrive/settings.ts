/** Settings of the redrive command. */
import { kafkaSecuritySettings } from '../../lib/kafka-security.js';
import { LOG_LEVELS, type LogLevel } from '../../lib/logger.js';
import { defineSettings, zEnum, zList, zString } from '../../lib/settings.js';

export const redriveSettings = defineSettings('redrive', {
  kafkaBrokers: {
    env: 'KAFKA_BROKERS',
    default: '127.0.0.1:19092',
    parser: zList({ minItems: 1, example: '127.0.0.1:19092' }),
    description: 'Kafka bootstrap brokers.',
  },
  ...kafkaSecuritySettings,
  databaseUrl: {
    env: 'CONSUMER_DATABASE_URL',
    default: '',
    parser: zString({
      pattern: /^(postgres(ql)?:\/\/.+)?$/,
      expected: 'a postgres:// URL (needed by redrive, not by list)',
      example: 'postgres://consumers:secret@127.0.0.1:54329/stagefront_consumers',
    }),
    description: 'The consumer database, where the redrives table records what was redriven.',
    secret: true,
  },
  logLevel: {
    env: 'LOG_LEVEL',
    default: 'info',
    parser: zEnum(LOG_LEVELS as [LogLevel, ...LogLevel[]]),
    description: 'pino log level (one line per redriven record).',
  },
});
