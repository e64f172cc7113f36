/**
 * Failover of the seat database to its standby (STACK_POSTGRES_STANDBY=yes, Postgres 17+): check
 * the standby holds the connector's slot synchronized, promote it, mark the former primary so it
 * never starts as a primary again, point the outbox connector at the new primary through the
 * connector code, and wait until the task runs and the slot has its reader again.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import {
  ConnectorFailed,
  restartFailed,
  waitUntilRunning,
  type ConnectorStatus,
} from '../connectors/connect-client.js';
import { applyOutboxConnector, type ConnectorConfig } from '../connectors/outbox-connector.js';
import { type ErrorCode, PipelineError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { waitFor } from '../lib/wait.js';
import type { StackLayout } from './config.js';
import { FAILED_OVER_MARKER, postgresComponent, postgresHome } from './postgres.js';
import { adminUrl, postgresStandbyComponent, standbyHome } from './postgres-standby.js';

export interface FailoverOptions {
  /** A planned switchover: stop a primary that still answers (cleanly) before promoting. */
  stopPrimary: boolean;
}

/** The connector's slot as one node sees it. */
export interface SlotOnNode {
  exists: boolean;
  synced: boolean;
  /** On a standby: synchronized but not yet persisted (sync-ready); a promotion drops such a slot. */
  temporary: boolean;
  failover: boolean;
  active: boolean;
  confirmedFlushLsn: string | null;
  invalidationReason: string | null;
}

export interface FailoverReport {
  newPrimaryPort: number;
  /** The timeline the new primary writes on. */
  timeline: number;
  promoted: boolean;
  slotBeforePromotion: SlotOnNode;
  slotAfter: SlotOnNode;
  connector: ConnectorStatus;
  /** From the start of the command to the slot active on the new primary. */
  seconds: number;
}

function failoverError(code: ErrorCode, message: string): PipelineError {
  return new PipelineError(code, message);
}

async function query<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function slotOnNode(url: string, slotName: string): Promise<SlotOnNode> {
  const rows = await query<{
    synced: boolean;
    temporary: boolean;
    failover: boolean;
    active: boolean;
    confirmed_flush_lsn: string | null;
    invalidation_reason: string | null;
  }>(
    url,
    /* sql */ `select synced, temporary, failover, active, confirmed_flush_lsn::text, invalidation_reason from pg_replication_slots where slot_name = $1`,
    [slotName],
  );
  const row = rows[0];
  if (row === undefined)
    return {
      exists: false,
      synced: false,
      temporary: false,
      failover: false,
      active: false,
      confirmedFlushLsn: null,
      invalidationReason: null,
    };
  return {
    exists: true,
    synced: row.synced,
    temporary: row.temporary,
    failover: row.failover,
    active: row.active,
    confirmedFlushLsn: row.confirmed_flush_lsn,
    invalidationReason: row.invalidation_reason,
  };
}

async function inRecovery(url: string): Promise<boolean> {
  const rows = await query<{ recovering: boolean }>(url, /* sql */ `select pg_is_in_recovery() as recovering`);
  return rows[0]?.recovering === true;
}

/** The connector settings with the seat database moved to `port` (the same host). */
function connectorOnPort(config: ConnectorConfig, port: number): ConnectorConfig {
  const url = new URL(config.seatDbUrl);
  url.port = String(port);
  return { ...config, seatDbPort: port, seatDbUrl: url.toString() };
}

/** Why a slot on the standby cannot carry the connector over, or undefined when it can. */
export function standbySlotProblem(slotName: string, slot: SlotOnNode): string | undefined {
  if (!slot.exists)
    return `the standby has no slot ${slotName}: the connector's slot is not a failover slot (CONNECTOR_SLOT_FAILOVER=yes when it is created) or was never synchronized`;
  if (!slot.synced) return `slot ${slotName} on the standby is not synchronized from the primary (synced = false)`;
  if (slot.temporary)
    return `slot ${slotName} on the standby is synchronized but not yet sync-ready (temporary: the primary's slot has not yet passed the standby's position), and a promotion drops it`;
  if (slot.invalidationReason !== null)
    return `slot ${slotName} on the standby is invalidated (${slot.invalidationReason})`;
  return undefined;
}

async function promote(layout: StackLayout, options: FailoverOptions, logger: Logger): Promise<boolean> {
  const standbyUrl = adminUrl(layout.settings.postgresStandbyPort);
  if (!(await inRecovery(standbyUrl))) {
    logger.warn(
      { port: layout.settings.postgresStandbyPort },
      'the standby is already a primary (promoted earlier); going on with the connector',
    );
    return false;
  }
  const primary = postgresComponent(layout);
  if (await primary.healthy()) {
    if (!options.stopPrimary) {
      throw failoverError(
        'primary_still_running',
        `the primary on port ${layout.settings.postgresPort} still answers: promoting the standby now would make two primaries. ` +
          'For a planned switchover run npm run stack -- failover --stop-primary (it stops the primary cleanly first); after a crash, make sure the primary is down',
      );
    }
    logger.info({ port: layout.settings.postgresPort }, 'stopping the primary cleanly (planned switchover)');
    await primary.stop();
  }
  await query(standbyUrl, /* sql */ `select pg_promote(true, 60)`);
  writeFileSync(
    join(postgresHome(layout), FAILED_OVER_MARKER),
    `${JSON.stringify({ newPrimaryPort: layout.settings.postgresStandbyPort, newPrimaryHome: standbyHome(layout), at: new Date().toISOString() })}\n`,
  );
  logger.info({ port: layout.settings.postgresStandbyPort }, 'standby promoted: it is the primary now');
  return true;
}

/** Applies the connector on the new primary; a task FAILED by the old primary's death is restarted. */
async function moveConnector(config: ConnectorConfig, logger: Logger): Promise<ConnectorStatus> {
  try {
    return await applyOutboxConnector(config, logger);
  } catch (error) {
    if (!(error instanceof ConnectorFailed)) throw error;
    logger.warn(
      { connector: config.connectorName },
      'task failed after the primary went away; restarting it on the new primary',
    );
    await restartFailed(config, config.connectorName);
    return waitUntilRunning(config, config.connectorName, config.readyTimeoutMs);
  }
}

/**
 * Promotes the standby and moves the connector (given as it was configured for the old primary) to it.
 * Refuses before promoting when the primary still answers (unless stopPrimary). When the standby has
 * no usable synchronized slot it still promotes (the seat database must take writes), leaves the
 * connector alone and fails naming the lost-slot recovery: Debezium would make a new slot and skip
 * every event in between.
 */
export async function failOver(
  layout: StackLayout,
  connector: ConnectorConfig,
  logger: Logger,
  options: FailoverOptions,
): Promise<FailoverReport> {
  const began = Date.now();
  if (!layout.settings.postgresStandby) {
    throw failoverError(
      'no_standby',
      'STACK_POSTGRES_STANDBY is no: this stack has no standby to promote (before Postgres 17 a failover means a new slot and the lost-slot recovery, npm run slot-recovery)',
    );
  }
  const standby = postgresStandbyComponent(layout);
  if (!(await standby.healthy())) {
    throw failoverError(
      'standby_down',
      `the standby on port ${layout.settings.postgresStandbyPort} does not answer; start it (npm run stack -- start) or read its log ${standby.logFile}`,
    );
  }
  const newPort = layout.settings.postgresStandbyPort;
  const moved = connectorOnPort(connector, newPort);
  const seatDbOnStandby = adminUrl(newPort, connector.seatDbName);
  const slotBeforePromotion = await slotOnNode(seatDbOnStandby, connector.slotName);
  const promoted = await promote(layout, options, logger);
  await waitFor(async () => !(await inRecovery(seatDbOnStandby)), {
    timeoutMs: 60_000,
    intervalMs: 200,
    description: 'the promoted standby to accept writes',
  });
  const slotProblem = promoted ? standbySlotProblem(connector.slotName, slotBeforePromotion) : undefined;
  const slotAfterPromotion = await slotOnNode(seatDbOnStandby, connector.slotName);
  if (slotProblem !== undefined || !slotAfterPromotion.exists) {
    throw failoverError(
      'slot_not_on_new_primary',
      `the standby on port ${newPort} is the primary now, but ${slotProblem ?? `slot ${connector.slotName} is not there after the promotion`}. ` +
        `The connector was left alone (a new slot would skip every event in between). Recover with the lost-slot recovery against the new primary: SEAT_DB_PORT=${newPort} npm run slot-recovery -- --since auto --apply`,
    );
  }
  const status = await moveConnector(moved, logger);
  const slotAfter = await waitFor(
    async () => {
      const slot = await slotOnNode(seatDbOnStandby, connector.slotName);
      return slot.active ? slot : undefined;
    },
    {
      timeoutMs: connector.readyTimeoutMs,
      intervalMs: 250,
      description: `slot ${connector.slotName} to be active on the new primary (port ${newPort})`,
    },
  );
  // The WAL file name starts with the timeline (the end-of-recovery checkpoint may not have happened yet).
  const walFile =
    (
      await query<{ name: string }>(seatDbOnStandby, /* sql */ `select pg_walfile_name(pg_current_wal_lsn()) as name`)
    )[0]?.name ?? '0';
  const timeline = Number.parseInt(walFile.slice(0, 8), 16);
  return {
    newPrimaryPort: newPort,
    timeline,
    promoted,
    slotBeforePromotion,
    slotAfter,
    connector: status,
    seconds: (Date.now() - began) / 1000,
  };
}
