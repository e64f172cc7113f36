/**
 * The consumer database's migrations: the runtime's shared ones (inbox, delivery attempts,
 * redrives and the three built-in read models) in `consumers/migrations/`, recorded in
 * `public.schema_migrations`, then a consumer's own (`ConsumerDefinition.migrations`) in its schema.
 */
import { PipelineError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { runMigrations } from '../../lib/migrations.js';
import type { Pool } from '../../lib/postgres.js';
import type { ConsumerDefinition } from './types.js';
import { besideModule } from '../../lib/source-tree.js';

export const CONSUMER_MIGRATIONS = besideModule(import.meta.url, '..', 'migrations');

const OWN_SCHEMA = /^[a-z][a-z0-9_]{0,62}$/;

function assertOwnSchema(definition: ConsumerDefinition, schema: string): void {
  if (OWN_SCHEMA.test(schema) && schema !== 'public' && !schema.startsWith('pg_')) return;
  throw new PipelineError(
    'consumer_migrations_schema_invalid',
    `Consumer ${definition.name} names migrations schema "${schema}"; use a schema of its own (lower-case letters, digits, underscores, not public), e.g. its name with _ for -.`,
    { details: { consumer: definition.name, schema } },
  );
}

/**
 * Applies the runtime's migrations, then the consumer's own (when its definition names them), each
 * under its own advisory lock; returns nothing, logs each file applied.
 */
export async function migrateConsumerDatabase(
  pool: Pool,
  definition: ConsumerDefinition,
  logger?: Logger,
): Promise<void> {
  await runMigrations({ pool, folder: CONSUMER_MIGRATIONS, logger });
  const own = definition.migrations;
  if (own === undefined) return;
  assertOwnSchema(definition, own.schema);
  await runMigrations({ pool, folder: own.folder, schema: own.schema, logger });
}
