/**
 * A `counted` consumer as a process of its own, for drills that end a process (a handler that
 * calls process.exit). Configured by environment: COUNTED_NAME (consumer, group and table
 * consumer), COUNTED_TOPIC, COUNTED_DATABASE_URL, KAFKA_BROKERS, SCHEMA_REGISTRY_URL,
 * DELIVERY_LIMIT, and optionally CONSUMER_MAX_COLLECTION_ITEMS (a drill that must let a hostile
 * collection reach avsc raises it), and the KAFKA_SECURITY_* settings of the programs (unset:
 * plaintext). Stops on SIGTERM.
 */
import { createKafka } from '../../../lib/kafka.js';
import { kafkaClientSecurity, kafkaSecuritySettings } from '../../../lib/kafka-security.js';
import { createLogger } from '../../../lib/logger.js';
import { createPool } from '../../../lib/postgres.js';
import { createSchemaRegistry } from '../../../lib/schema-registry.js';
import { defineSettings, parseSettings } from '../../../lib/settings.js';
import { startConsumer } from '../../../consumers/runtime/consumer.js';
import { countedConsumer } from './counted-events.js';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}

const name = required('COUNTED_NAME');
const security = kafkaClientSecurity(name, parseSettings(defineSettings(name, kafkaSecuritySettings), process.env));
const logger = createLogger({ name, level: 'warn' });
const pool = createPool({ connectionString: required('COUNTED_DATABASE_URL'), applicationName: name, logger, max: 3 });
const running = await startConsumer({
  definition: countedConsumer(name, [required('COUNTED_TOPIC')]),
  kafka: createKafka({ brokers: required('KAFKA_BROKERS').split(','), clientId: name, logger, security }),
  groupId: name,
  registry: createSchemaRegistry(required('SCHEMA_REGISTRY_URL')),
  pool,
  logger,
  policy: {
    deadlineMs: 300_000,
    lateRetryWindowMs: 5_000,
    deliveryLimit: Number(required('DELIVERY_LIMIT')),
    retryBaseMs: 100,
    retryCapMs: 1_000,
  },
  sessionTimeoutMs: 6_000,
  decodeLimits: process.env.CONSUMER_MAX_COLLECTION_ITEMS
    ? { maxCollectionItems: Number(process.env.CONSUMER_MAX_COLLECTION_ITEMS) }
    : {},
});
process.once('SIGTERM', () => {
  void running
    .stop()
    .then(() => pool.end())
    .then(() => process.exit(0));
});
