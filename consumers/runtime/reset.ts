/**
 * `npm run consumer:<name> -- reset [--yes]`: starts a consumer over, its Kafka group and its read
 * model together. Dropping a trial database is not enough: the group keeps its committed offsets,
 * so a new database stays empty at lag 0. This puts the group's offsets back to the earliest record
 * of each topic, then drops the consumer's own schema (its read model and its migrations' record)
 * and its rows of the shared inbox and delivery attempts, so the next start builds the read model
 * again from every event the topics still hold. Without --yes it says what it would do and changes
 * nothing. It refuses while an instance of the consumer is in the group (stop them all first).
 *
 * Kafka first: if the database step then fails, the next start reads everything again into the
 * old read model, and the inbox skips what it holds (no harm, run reset again); the other order
 * would leave an empty read model at the old offsets, the very trap this command removes.
 */
import pg from 'pg';
import { PipelineError } from '../../lib/errors.js';
import type { Kafka } from '../../lib/kafka.js';
import { type Pool, withTransaction } from '../../lib/postgres.js';
import type { ConsumerDefinition } from './types.js';

export interface ResetPlan {
  consumer: string;
  groupId: string;
  /** The group's state as the coordinator says it (Empty, Dead: nobody in it). */
  groupState: string;
  members: string[];
  /** Per topic: partitions whose committed offset is past the earliest record still held. */
  topics: { topic: string; ahead: number; partitions: number; earliest: { partition: number; offset: string }[] }[];
  /** The consumer's own schema, and whether it exists. */
  schema: string;
  schemaExists: boolean;
  inboxRows: number;
  hasInbox: boolean;
}

/** Whether the group may be reset: nobody in it. */
function groupIsEmpty(plan: ResetPlan): boolean {
  return plan.members.length === 0;
}

/** What reset would do (or refuses to), one line each; a dry run says what it would refuse. */
export function describeReset(plan: ResetPlan, dryRun = false): string[] {
  const lines = [`consumer ${plan.consumer}, group ${plan.groupId} (${plan.groupState})`];
  for (const t of plan.topics)
    lines.push(
      `  ${t.topic}: ${t.ahead} of ${t.partitions} partitions have committed offsets past the earliest record; all go back to the earliest`,
    );
  lines.push(
    plan.schemaExists
      ? `  schema ${plan.schema} (its read model and migration record): dropped, made again at the next start`
      : `  schema ${plan.schema}: not there (nothing to drop)`,
  );
  lines.push(`  inbox: ${plan.inboxRows} rows of ${plan.consumer} deleted, with its delivery attempts`);
  if (!groupIsEmpty(plan))
    lines.push(
      `${dryRun ? 'would be refused' : 'refused'}: ${plan.members.length} instance(s) of the consumer are in group ${plan.groupId} (${plan.members.join(', ')}); stop every instance, then run reset ${dryRun ? '--yes' : 'again'}`,
    );
  return lines;
}

async function planReset(definition: ConsumerDefinition, groupId: string, kafka: Kafka, pool: Pool) {
  if (definition.effects.kind === 'external')
    throw new PipelineError(
      'consumer_reset_unsupported',
      `consumer ${definition.name} has effects outside the database (an email, a call): a reset would forget what it sent and do every one of them again, so reset refuses it; redrive or replay the events you mean instead (docs/subscribing.md)`,
    );
  const schema = definition.migrations?.schema;
  if (schema === undefined)
    throw new PipelineError(
      'consumer_reset_unsupported',
      `consumer ${definition.name} keeps its read model outside a schema of its own (its definition names no migrations), so reset cannot tell its tables from others'; give it migrations in a schema of its own (docs/writing-a-consumer.md), or reset its tables by hand`,
    );
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [group] = (await admin.describeGroups([groupId])).groups;
    const committed = await admin.fetchOffsets({ groupId, topics: [...definition.topics] });
    const topics = [];
    for (const { topic, partitions } of committed) {
      const earliest = (await admin.fetchTopicOffsets(topic)).map((p) => ({ partition: p.partition, offset: p.low }));
      const low = new Map(earliest.map((p) => [p.partition, Number(p.offset)]));
      const ahead = partitions.filter((p) => Number(p.offset) > (low.get(p.partition) ?? 0)).length;
      topics.push({ topic, ahead, partitions: partitions.length, earliest });
    }
    const { rows } = await pool.query<{ schema_exists: boolean; inbox: boolean }>(
      `select exists (select 1 from pg_namespace where nspname = $1) as schema_exists,
              to_regclass('public.inbox') is not null as inbox`,
      [schema],
    );
    // A database no consumer has started on has no inbox yet.
    const inboxRows = rows[0]?.inbox
      ? (await pool.query<{ n: number }>('select count(*)::int as n from inbox where consumer = $1', [definition.name]))
          .rows[0]?.n
      : 0;
    return {
      consumer: definition.name,
      groupId,
      groupState: group?.state ?? 'Dead',
      members: (group?.members ?? []).map((m) => `${m.clientId} on ${m.clientHost}`),
      topics,
      schema,
      schemaExists: rows[0]?.schema_exists ?? false,
      inboxRows: inboxRows ?? 0,
      hasInbox: rows[0]?.inbox ?? false,
    } satisfies ResetPlan;
  } finally {
    await admin.disconnect();
  }
}

/**
 * The reset command: the plan, then, without --yes, nothing more (a dry run: exit 0); with --yes a
 * refusal while instances run (exit 1: the fix is to stop them) or the reset (exit 0).
 */
export async function runReset(
  definition: ConsumerDefinition,
  groupId: string,
  kafka: Kafka,
  pool: Pool,
  options: { yes: boolean },
  out: (line: string) => void,
): Promise<number> {
  const plan = await planReset(definition, groupId, kafka, pool);
  for (const line of describeReset(plan, !options.yes)) out(line);
  if (!options.yes) {
    out(
      groupIsEmpty(plan)
        ? 'a dry run: nothing was changed. Run it again with --yes to reset.'
        : 'a dry run: nothing was changed.',
    );
    return 0;
  }
  if (!groupIsEmpty(plan)) return 1;
  // The earliest offsets themselves, not kafkajs's "earliest" marker, which each consumer would
  // read through its own fromBeginning. Kafka refuses while an instance is in the group, so one
  // started since the plan was read stops the reset here, before the read model is touched.
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (const { topic, earliest } of plan.topics)
      await admin.setOffsets({ groupId, topic, partitions: earliest }).catch((err: unknown) => {
        if (!/running instances|NON_EMPTY_GROUP|REBALANCE_IN_PROGRESS|UNKNOWN_MEMBER_ID/i.test(String(err))) throw err;
        throw new PipelineError(
          'consumer_reset_unsupported',
          `an instance of ${definition.name} joined group ${groupId} during the reset (${String(err)}); nothing of the read model was touched: stop every instance, then run reset again`,
        );
      });
  } finally {
    await admin.disconnect();
  }
  await withTransaction(pool, async (client) => {
    await client.query(`drop schema if exists ${pg.escapeIdentifier(plan.schema)} cascade`);
    if (!plan.hasInbox) return;
    await client.query('delete from inbox where consumer = $1', [definition.name]);
    await client.query('delete from delivery_attempts where consumer = $1', [definition.name]);
  });
  out(
    `reset ${definition.name}: group ${groupId} at the earliest offsets, schema ${plan.schema} dropped, ${plan.inboxRows} inbox rows deleted; the next start builds the read model again from the topics`,
  );
  return 0;
}
