/** What every bench scenario gets: the shared stack's clients, a run id for unique names, and the scale. */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
import { type Kafka, createKafka } from '../lib/kafka.js';
import { kafkaClientSecurity, kafkaSecurityEnv } from '../lib/kafka-security.js';
import { type Logger, createLogger } from '../lib/logger.js';
import { runMigrations } from '../lib/migrations.js';
import { parseSettings } from '../lib/settings.js';
import { type Pool, createPool } from '../lib/postgres.js';
import { type Registry, createSchemaRegistry } from '../lib/schema-registry.js';
import { CONSUMER_MIGRATIONS } from '../consumers/runtime/migrations.js';
import { stackEndpoints, stackLayout } from '../stack/config.js';
import type { Figure } from './report.js';
import { benchSettings } from './settings.js';

export type { Scale } from './scales.js';
import type { Scale } from './scales.js';

export interface BenchContext {
  scale: Scale;
  runId: string;
  stack: ReturnType<typeof stackEndpoints>;
  kafka: Kafka;
  /** The bench's KAFKA_SECURITY_* variables, for the connector and the programs it starts. */
  kafkaEnv: Record<string, string>;
  registry: Registry;
  logger: Logger;
  /** Adds a row to the table. */
  record(figure: Omit<Figure, 'scenario'>): void;
  /** Adds a footnote under the table. */
  note(text: string): void;
  /** A unique lower-case name for databases, topics, groups and connectors of this run. */
  name(label: string): string;
}

export interface Scenario {
  name: string;
  description: string;
  run(ctx: BenchContext): Promise<void>;
}

export function benchContext(
  scale: Scale,
  sink: { figures: Figure[]; notes: string[] },
  scenario: () => string,
): BenchContext {
  const stack = stackEndpoints(stackLayout());
  const security = parseSettings(benchSettings, process.env);
  const logger = createLogger({ name: 'bench', level: (process.env.BENCH_LOG_LEVEL as 'info' | undefined) ?? 'warn' });
  const runId = `bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  return {
    scale,
    runId,
    stack,
    kafka: createKafka({
      brokers: stack.kafkaBrokers,
      clientId: runId,
      logger,
      security: kafkaClientSecurity(benchSettings.program, security),
    }),
    kafkaEnv: kafkaSecurityEnv(security),
    registry: createSchemaRegistry(stack.registryUrl),
    logger,
    record: (figure) => sink.figures.push({ scenario: scenario(), ...figure }),
    note: (text) => sink.notes.push(text),
    name: (label) => `${runId}_${label}`.toLowerCase(),
  };
}

export function machineDescription(): string {
  return `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GB, ${os.platform()} ${os.release()}, node ${process.version}`;
}

export async function adminSql(ctx: BenchContext, sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: ctx.stack.postgresAdminUrl });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/** A fresh database on the stack's cluster; `drop` removes it. */
export async function freshDatabase(
  ctx: BenchContext,
  label: string,
): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = ctx.name(label);
  await adminSql(ctx, `create database ${pg.escapeIdentifier(name)}`);
  return {
    name,
    url: ctx.stack.postgresAdminUrl.replace(/\/postgres$/, `/${name}`),
    drop: async () => void (await adminSql(ctx, `drop database if exists ${pg.escapeIdentifier(name)} with (force)`)),
  };
}

/** A fresh consumer database with the consumers' migrations (inbox, read models). */
export async function consumerDatabase(
  ctx: BenchContext,
  label: string,
  poolSize: number,
): Promise<{ pool: Pool; drop: () => Promise<void> }> {
  const database = await freshDatabase(ctx, label);
  const pool = createPool({
    connectionString: database.url,
    applicationName: `bench-${label}`,
    logger: ctx.logger,
    max: poolSize,
  });
  await runMigrations({ pool, folder: CONSUMER_MIGRATIONS });
  return {
    pool,
    drop: async () => {
      await pool.end();
      await database.drop();
    },
  };
}
