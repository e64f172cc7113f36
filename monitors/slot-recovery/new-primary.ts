/**
 * After a failover on Postgres 15 or 16 the promoted standby has no logical slot: slots are not
 * copied by physical replication before Postgres 17's synchronized slots. These steps prepare the
 * new primary (promoted, publication present, slot created before writes resume) and point the
 * stopped connector at it. The re-emit of the window is the lost-slot recovery's own (re-emit.ts).
 */
import { putConnectorConfig } from '../../connectors/connect-client.js';
import { connectorState, liveConnectorConfig } from '../../connectors/connector-lifecycle.js';
import { PipelineError } from '../../lib/errors.js';
import type { RecoveryContext } from './recovery-context.js';
import { readSlot } from './slot-state.js';
import { OUTBOX_TABLE } from './snapshot-signal.js';

/** Where the connector reaches the new primary (Connect's view, which may differ from ours). */
export interface DatabaseAddress {
  host: string;
  port: number;
}

export function parseAddress(text: string, what: string): DatabaseAddress {
  const match = /^(.+):(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (match?.[1] === undefined || !(port > 0 && port < 65536)) {
    throw new PipelineError(
      'bad_argument',
      `${what} must be host:port (db-2.internal:5432), not ${JSON.stringify(text)}`,
    );
  }
  return { host: match[1], port };
}

/** The seat database URL's host and port: the connector's address when --connector-db is not given. */
export function addressOfUrl(url: string): DatabaseAddress {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || 5432) };
}

/** The new primary must accept writes: a slot cannot be created on a standby still in recovery (before 16), nor should the connector read one. */
async function checkPromoted(ctx: RecoveryContext): Promise<void> {
  const { rows } = await ctx.seatPool.query<{ in_recovery: boolean }>(
    /* sql */ `select pg_is_in_recovery() as in_recovery`,
  );
  if (rows[0]?.in_recovery === true) {
    throw new PipelineError(
      'not_promoted',
      'SLOT_RECOVERY_SEAT_DB_URL points at a standby still in recovery: promote it first (pg_ctl promote, or select pg_promote()), then run this again',
    );
  }
}

/** The publication came over with the catalog; check it is there and still publishes the outbox. */
async function checkPublication(ctx: RecoveryContext, publication: string): Promise<void> {
  const { rows } = await ctx.seatPool.query<{ outbox: boolean }>(
    /* sql */ `select exists (select 1 from pg_publication_tables t where t.pubname = p.pubname and t.schemaname || '.' || t.tablename = $2) as outbox
              from pg_publication p where p.pubname = $1`,
    [publication, OUTBOX_TABLE],
  );
  if (rows[0] === undefined)
    throw new PipelineError(
      'publication_missing',
      `publication ${publication} does not exist on the new primary: run the seat database migrations there (npm run seat-service -- setup)`,
    );
  if (!rows[0].outbox)
    throw new PipelineError(
      'publication_missing',
      `publication ${publication} on the new primary does not publish ${OUTBOX_TABLE}: run the seat database migrations there (npm run seat-service -- setup)`,
    );
}

/**
 * (f1) On the promoted standby: check it is promoted and has the publication, and create the
 * connector's logical slot unless it exists. From the moment the slot exists, Postgres keeps every
 * change for it: writes may resume. Returns whether this call created it.
 */
export async function newPrimaryStep(ctx: RecoveryContext): Promise<boolean> {
  await checkPromoted(ctx);
  const live = await liveConnectorConfig(ctx.config, ctx.config.connectorName);
  await checkPublication(ctx, live['publication.name'] ?? 'stagefront_outbox');
  const slot = await readSlot(ctx.seatPool, ctx.slotName);
  if (slot.exists) {
    if (slot.walStatus === 'lost')
      throw new PipelineError(
        'slot_lost',
        `slot ${ctx.slotName} on the new primary is lost: run npm run slot-recovery -- --since auto --apply (without --after-failover)`,
      );
    ctx.logger.info(
      { step: 'create-slot', slot: ctx.slotName },
      'slot already exists on the new primary: writes may resume',
    );
    return false;
  }
  await ctx.seatPool.query(/* sql */ `select pg_create_logical_replication_slot($1, 'pgoutput')`, [ctx.slotName]);
  ctx.logger.info({ step: 'create-slot', slot: ctx.slotName }, 'slot created on the new primary: writes may resume');
  return true;
}

/** (f2) Points the stopped connector at the new primary. Connect keeps a STOPPED connector stopped across a configuration update. */
export async function repointStep(ctx: RecoveryContext, address: DatabaseAddress): Promise<void> {
  const { connectorName } = ctx.config;
  const live = await liveConnectorConfig(ctx.config, connectorName);
  const from = `${live['database.hostname']}:${live['database.port']}`;
  const to = `${address.host}:${address.port}`;
  if (from === to) {
    ctx.logger.info(
      { step: 'repoint', connector: connectorName, database: to },
      'connector already points at the new primary',
    );
    return;
  }
  const { name: _name, ...config } = live;
  await putConnectorConfig(ctx.config, connectorName, {
    ...config,
    'database.hostname': address.host,
    'database.port': String(address.port),
  });
  ctx.logger.info(
    { step: 'repoint', connector: connectorName, from, database: to },
    'connector now points at the new primary',
  );
}

/** A finished run (or a connector repointed by hand): it runs against the new primary and reads its slot. */
export async function streamsFromNewPrimary(ctx: RecoveryContext, address: DatabaseAddress): Promise<boolean> {
  const { connectorName } = ctx.config;
  const [live, state, slot] = await Promise.all([
    liveConnectorConfig(ctx.config, connectorName),
    connectorState(ctx.config, connectorName),
    readSlot(ctx.seatPool, ctx.slotName),
  ]);
  const pointsThere = live['database.hostname'] === address.host && live['database.port'] === String(address.port);
  return pointsThere && state === 'RUNNING' && slot.exists && slot.active && slot.walStatus !== 'lost';
}
