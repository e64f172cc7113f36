/**
 * The life of a consumer program: --help, settings, then (in setup order) logger, consumer
 * database pool and migrations, Kafka and registry clients, the runtime, the metrics endpoint;
 * graceful shutdown on the first signal releases them in reverse order, forced on the second.
 */
import { createKafka } from '../../lib/kafka.js';
import { createLogger, type Logger } from '../../lib/logger.js';
import { createMetricsRegistry, serveHttp } from '../../lib/metrics.js';
import { runMigrations } from '../../lib/migrations.js';
import { createPool } from '../../lib/postgres.js';
import { createSchemaRegistry } from '../../lib/schema-registry.js';
import { type Config, ConfigError, type SettingsDefinition, type SettingsTable, configForLog, parseSettings, settingsHelp } from '../../lib/settings.js';
import { Releasers, onShutdownSignals } from '../../lib/shutdown.js';
import { startConsumer } from './consumer.js';
import { registerConsumerMetrics } from './metrics.js';
import { CONSUMER_MIGRATIONS } from './migrations.js';
import type { CommonConsumerConfig } from './settings.js';
import type { ConsumerDefinition } from './types.js';

export interface BuiltConsumer {
  definition: ConsumerDefinition;
  /** Cleanup of what the builder opened (an SMTP transport). */
  release?: () => void | Promise<void>;
}

/** Parses the settings, or prints --help / the problems and exits. */
export function settingsOrExit<T extends SettingsTable>(def: SettingsDefinition<T>, argv: readonly string[] = process.argv.slice(2)): Config<T> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(settingsHelp(def));
    process.exit(0);
  }
  try {
    return parseSettings(def);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${def.program} cannot start:\n${err.problems.map((p) => `  ${p}`).join('\n')}\n`);
    process.exit(2);
  }
}

async function startParts<C extends CommonConsumerConfig>(program: string, config: C, logger: Logger, releasers: Releasers, build: (config: C, logger: Logger) => BuiltConsumer): Promise<void> {
  const pool = createPool({ connectionString: config.databaseUrl, applicationName: program, logger, max: config.databasePoolSize });
  releasers.add('consumer database pool', () => pool.end());
  await runMigrations({ pool, folder: CONSUMER_MIGRATIONS, logger });
  const built = build(config, logger);
  if (built.release) releasers.add(`${program} resources`, built.release);
  const kafka = createKafka({ brokers: config.kafkaBrokers, clientId: program, logger });
  const metrics = createMetricsRegistry(program);
  const running = await startConsumer({
    definition: built.definition,
    kafka,
    groupId: config.groupId,
    registry: createSchemaRegistry(config.registryUrl),
    pool,
    logger,
    policy: { deadlineMs: config.deadlineMs, deliveryLimit: config.deliveryLimit, retryBaseMs: config.retryBaseMs, retryCapMs: config.retryCapMs },
    partitionsConsumedConcurrently: config.partitionsConcurrently,
    maxBytesPerPartition: config.maxBytesPerPartition,
  });
  releasers.add('consumer', () => running.stop());
  registerConsumerMetrics(metrics, built.definition.name, running.events);
  const http = await serveHttp({ registry: metrics, port: config.metricsPort, host: config.metricsHost, health: running.isHealthy, ready: running.isReady });
  releasers.add('metrics endpoint', () => http.close());
  logger.info({ metrics: http.url, topics: built.definition.topics, group: config.groupId }, `${program} consuming`);
}

/** Runs a consumer program until a signal; exits 1 when the start fails. */
export async function runConsumerProgram<T extends SettingsTable>(
  def: SettingsDefinition<T>,
  build: (config: Config<T> & CommonConsumerConfig, logger: Logger) => BuiltConsumer,
): Promise<void> {
  const config = settingsOrExit(def) as Config<T> & CommonConsumerConfig;
  const logger = createLogger({ name: def.program, level: config.logLevel });
  logger.info({ config: configForLog(def, config) }, `${def.program} starting`);
  const releasers = new Releasers(logger);
  onShutdownSignals({
    logger,
    graceful: async () => {
      const errors = await releasers.releaseAll();
      if (errors.length > 0) process.exitCode = 1;
    },
  });
  try {
    await startParts(def.program, config, logger, releasers, build);
  } catch (err) {
    logger.fatal({ err }, `${def.program} could not start`);
    await releasers.releaseAll();
    process.exit(1);
  }
}
