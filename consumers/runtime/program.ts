/**
 * The life of a consumer program, in the frame every long-running program shares
 * (lib/long-running-program.ts: settings, logger, /metrics /healthz /readyz, graceful shutdown).
 * Its parts in setup order: tracing, consumer database pool, the consumer's definition, migrations
 * (the runtime's, then the consumer's own), Kafka and registry clients, the runtime, the metrics
 * endpoint; the first signal releases them in reverse order, the second forces the exit.
 */
import { badArgument } from '../../lib/cli.js';
import { createKafka } from '../../lib/kafka.js';
import { kafkaClientSecurity } from '../../lib/kafka-security.js';
import type { Logger } from '../../lib/logger.js';
import {
  type ProgramParts,
  type StartedProgram,
  serveProgramEndpoint,
  startLongRunningProgram,
} from '../../lib/long-running-program.js';
import { consumerClientId } from './client-id.js';
import { createMetricsRegistry } from '../../lib/metrics.js';
import { assertReachable, createPool } from '../../lib/postgres.js';
import { createSchemaRegistry } from '../../lib/schema-registry.js';
import type { Config, SettingsDefinition, SettingsTable } from '../../lib/settings.js';
import { startTracing } from '../../lib/tracing.js';
import { startConsumer } from './consumer.js';
import { runReset } from './reset.js';
import { registerConsumerMetrics } from './metrics.js';
import { migrateConsumerDatabase } from './migrations.js';
import { type CommonConsumerConfig, decodeLimitsOf } from './settings.js';
import type { ConsumerDefinition } from './types.js';

export interface BuiltConsumer {
  definition: ConsumerDefinition;
  /** Cleanup of what the builder opened (an SMTP transport). */
  release?: () => void | Promise<void>;
}

async function startParts<C extends CommonConsumerConfig>(
  program: string,
  config: C,
  { logger, releasers }: ProgramParts,
  build: (config: C, logger: Logger) => BuiltConsumer,
): Promise<StartedProgram> {
  // Bad KAFKA_SECURITY_* settings (or an unreadable CA file) are bad configuration (exit 2), found before anything starts.
  const security = kafkaClientSecurity(program, config);
  await assertReachable(config.databaseUrl, 'npm run stack -- start (or set CONSUMER_DATABASE_URL)');
  // Released last: the consumer's final spans are sent after it stopped.
  const tracing = startTracing({ serviceName: program, otlpEndpoint: config.otlpEndpoint, logger });
  releasers.add('tracing', () => tracing.shutdown());
  const built = build(config, logger);
  if (built.release) releasers.add(`${program} resources`, built.release);
  // Migrations on a connection of their own: a long one (an index on a big table) is not a stall.
  const migrations = createPool({ connectionString: config.databaseUrl, applicationName: program, logger, max: 1 });
  try {
    await migrateConsumerDatabase(migrations, built.definition, logger);
  } finally {
    await migrations.end();
  }
  const pool = createPool({
    connectionString: config.databaseUrl,
    applicationName: program,
    logger,
    max: config.databasePoolSize,
    queryTimeoutMs: config.databaseQueryTimeoutMs,
  });
  releasers.add('consumer database pool', () => pool.end());
  const kafka = createKafka({ brokers: config.kafkaBrokers, clientId: consumerClientId(program), logger, security });
  const metrics = createMetricsRegistry(program);
  const running = await startConsumer({
    definition: built.definition,
    kafka,
    groupId: config.groupId,
    registry: createSchemaRegistry(config.registryUrl),
    pool,
    logger,
    policy: {
      deadlineMs: config.deadlineMs,
      lateRetryWindowMs: config.lateRetryWindowMs,
      deliveryLimit: config.deliveryLimit,
      retryBaseMs: config.retryBaseMs,
      retryCapMs: config.retryCapMs,
    },
    partitionsConsumedConcurrently: config.partitionsConcurrently,
    maxBytesPerPartition: config.maxBytesPerPartition,
    sessionTimeoutMs: config.sessionTimeoutMs,
    decodeLimits: decodeLimitsOf(config),
  });
  releasers.add('consumer', () => running.stop());
  registerConsumerMetrics(metrics, built.definition.name, running.events, config.deadlineMs);
  const http = await serveProgramEndpoint(releasers, {
    registry: metrics,
    port: config.metricsPort,
    host: config.metricsHost,
    health: running.isHealthy,
    ready: running.isReady,
  });
  return { http, logFields: { topics: built.definition.topics, group: config.groupId } };
}

/** `reset [--yes]` (consumers/runtime/reset.ts) with the program's own settings: its database, its Kafka, its group. */
async function resetCommand<C extends CommonConsumerConfig>(
  program: string,
  config: C,
  args: string[],
  logger: Logger,
  build: (config: C, logger: Logger) => BuiltConsumer,
): Promise<number> {
  const unknown = args.find((arg) => arg !== '--yes');
  if (unknown !== undefined) throw badArgument(`reset takes --yes only, not ${unknown}`);
  const security = kafkaClientSecurity(program, config);
  await assertReachable(config.databaseUrl, 'npm run stack -- start (or set CONSUMER_DATABASE_URL)');
  const built = build(config, logger);
  const pool = createPool({
    connectionString: config.databaseUrl,
    applicationName: `${program} reset`,
    logger,
    max: 1,
  });
  try {
    const kafka = createKafka({ brokers: config.kafkaBrokers, clientId: `${program}-reset`, logger, security });
    return await runReset(built.definition, config.groupId, kafka, pool, { yes: args.includes('--yes') }, (line) =>
      console.log(line),
    );
  } finally {
    await pool.end();
    await built.release?.();
  }
}

/** Runs a consumer program until a signal; exits 1 when the start fails, 2 on bad settings. */
export function runConsumerProgram<T extends SettingsTable>(
  def: SettingsDefinition<T>,
  build: (config: Config<T> & CommonConsumerConfig, logger: Logger) => BuiltConsumer,
): void {
  startLongRunningProgram({
    settings: def,
    usage:
      `Usage: npm run consumer:${def.program} [-- --help | --env-example | reset [--yes]]\n\n` +
      'Consumes its topics until SIGINT/SIGTERM (a second signal forces the exit).\n' +
      'reset: with every instance stopped, puts its group back to the earliest offsets and drops its read model\n' +
      '(its own schema) and its inbox rows, so the next start builds it again; without --yes it only says what it would do.',
    logLevel: (config) => (config as Config<T> & CommonConsumerConfig).logLevel,
    lines: { starting: `${def.program} starting`, running: `${def.program} consuming` },
    scrapeJob: 'consumers',
    start: (config, parts) => startParts(def.program, config as Config<T> & CommonConsumerConfig, parts, build),
    commands: {
      reset: (config, args, logger) =>
        resetCommand(def.program, config as Config<T> & CommonConsumerConfig, args, logger, build),
    },
  });
}
