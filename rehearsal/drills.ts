/**
 * Fault drills: during the crowd, one part at a time is killed with -9 (no shutdown hook, no
 * flush: a crash), held down (REHEARSAL_DRILL_DOWN_MS, and on the redundant stack until a survivor
 * took the work over), then given back to the rehearsal's supervisor, which starts it at once: a
 * stack component through the launcher's own step, a consumer or the sweeper with the settings it
 * was first started with.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { type ConnectApi, connectorStatus, isRunning, restartFailed } from '../connectors/connect-client.js';
import type { ConnectorConfig } from '../connectors/outbox-connector.js';
import { errorMessage } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { sleep, waitFor } from '../lib/wait.js';
import type { Component } from '../stack/component.js';
import { LOCAL_ROLE_PASSWORDS, type StackLayout } from '../stack/config.js';
import { parseSettings } from '../lib/settings.js';
import { recoverLostSlot } from '../monitors/slot-recovery/recovery.js';
import { slotRecoverySettings } from '../monitors/slot-recovery/settings.js';
import { failOver, slotOnNode, standbySlotProblem } from '../stack/failover.js';
import { stackComponents, startStack } from '../stack/launcher.js';
import { FAILED_OVER_MARKER, postgresHome } from '../stack/postgres.js';
import { adminUrl } from '../stack/postgres-standby.js';
import { isAlive } from '../stack/processes.js';
import type { Supervisor } from '../stack/supervisor.js';
import type { DrillTarget } from './drill-targets.js';
import type { ProgramSet } from './programs.js';
import type { CrowdSchedule } from './schedule.js';
import { chooseVictim, type TakeoverContext, type Victim } from './drill-takeover.js';

/** A drill as it happened; its lag, alerts and verdict are added once the run is over. */
export interface DrillRun {
  target: DrillTarget;
  /** The process killed: a stack component or a program of the rehearsal. */
  victim: string;
  killedAt: number;
  restartedAt: number | null;
  backAt: number | null;
  /** When the consumers had caught up again after it (lag back to what it was before the kill); null if not within CATCH_UP_TIMEOUT_MS. */
  caughtUpAt: number | null;
  /** What else it took to get back (a connector task restarted), or why it did not come back. */
  notes: string[];
  /** With survivors (redundant stack): the instance that took the victim's work over, and when; null if none did. */
  takenOverBy?: string | null;
  takenOverAt?: number | null;
}

export interface DrillContext {
  layout: StackLayout;
  programs: ProgramSet;
  /** The rehearsal's consumers, drilled in turn by successive consumer drills. */
  consumers: readonly string[];
  /** A consumer's instances, as program names (the first is the consumer's name). */
  instancesOf: (consumer: string) => readonly string[];
  /** The event topics the outbox connector writes. */
  topics: readonly string[];
  sweeper: string;
  /** Connect's workers (every one: a call goes to the first that answers) and the user that calls them. */
  connect: ConnectApi;
  connectorName: string;
  downMs: number;
  /** Keeps the stack and the programs running; a drill holds its victim down, then releases it to be started at once. */
  supervisor: Supervisor;
  logger: Logger;
  /** The consumer database as its owner: the failover drill reconciles the inboxes after the promotion. */
  consumerAdminUrl: string;
  /** The outbox connector as applied (on the primary's own port): the failover drill moves it to the promoted standby. */
  connector?: ConnectorConfig;
}

/** The failover drill's refusal on a stack without a standby. */
export const NO_STANDBY_MESSAGE =
  'the failover drill needs a seat database with a standby: start the stack with STACK_POSTGRES_STANDBY=yes (Postgres 17+, a stack of its own: afterwards it runs on the promoted standby)';

const BACK_TIMEOUT_MS = 180_000;
/** How long the failover drill waits for the standby's copy of the connector's slot to be sync-ready before it kills the primary. */
const SLOT_SYNC_TIMEOUT_MS = 180_000;

function component(layout: StackLayout, name: string): Component {
  const found = stackComponents(layout).find((c) => c.name === name);
  if (found === undefined) throw new Error(`the stack has no component named ${name}`);
  return found;
}

const COMPONENT_OF: Partial<Record<DrillTarget, string>> = {
  connect: 'connect',
  kafka: 'kafka',
  registry: 'registry',
  'seat-db': 'postgres',
};

/** The connector and its task RUNNING again; a task that FAILED on the way is restarted once, as an operator would. */
async function connectorBack(context: DrillContext, notes: string[]): Promise<void> {
  let restarted = false;
  await waitFor(
    async () => {
      const status = await connectorStatus(context.connect, context.connectorName);
      if (isRunning(status)) return true;
      const failed = status?.connector.state === 'FAILED' || (status?.tasks ?? []).some((t) => t.state === 'FAILED');
      if (failed && !restarted) {
        restarted = true;
        notes.push(`connector ${context.connectorName} FAILED after the restart; restarted through Connect's REST API`);
        await restartFailed(context.connect, context.connectorName);
      }
      return false;
    },
    { timeoutMs: BACK_TIMEOUT_MS, intervalMs: 500, description: `connector ${context.connectorName} to be RUNNING` },
  );
}

async function killComponent(target: Component): Promise<number> {
  const pid = target.pid();
  if (pid === undefined) throw new Error(`${target.name} is not running, so there is nothing to kill`);
  process.kill(pid, 'SIGKILL');
  await waitFor(() => !isAlive(pid), {
    timeoutMs: 30_000,
    intervalMs: 100,
    description: `${target.name} (pid ${pid}) to be gone`,
  });
  return pid;
}

/** The connector's slot on `port` confirmed past `lsn`: Debezium streams from that node again. */
async function slotPassed(port: number, connector: ConnectorConfig, lsn: string): Promise<boolean> {
  const client = new pg.Client({
    connectionString: adminUrl(port, connector.seatDbName),
    connectionTimeoutMillis: 2000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ passed: boolean }>(
      /* sql */ `select confirmed_flush_lsn >= $2::pg_lsn as passed from pg_replication_slots where slot_name = $1`,
      [connector.slotName, lsn],
    );
    return rows[0]?.passed === true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function currentLsn(port: number, database: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl(port, database), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (
      (await client.query<{ lsn: string }>(/* sql */ `select pg_current_wal_lsn()::text as lsn`)).rows[0]?.lsn ?? '0/0'
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The failover drill: the primary's postmaster killed with -9 (a crash: no checkpoint, no goodbye to
 * the standby), down for downMs (the time it takes to notice), then what on-call runs: the failover
 * command's failOver (promote the standby, move the connector with its synchronized slot), and a
 * wait until Debezium has confirmed WAL written on the new timeline. The programs follow through the
 * primary endpoint by themselves; the old primary is not started again.
 */
async function failoverDrill(context: DrillContext, run: DrillRun, log: Logger): Promise<void> {
  const { layout, connector } = context;
  if (!layout.settings.postgresStandby) throw new Error(NO_STANDBY_MESSAGE);
  if (connector === undefined)
    throw new Error("the failover drill needs the outbox connector's settings (native rehearsal only)");
  // As on-call checks before an on-sale: the standby holds the connector's slot synchronized and
  // sync-ready. A slot made minutes ago (a fresh stack) gets there once the crowd has moved it on.
  const onStandby = adminUrl(layout.settings.postgresStandbyPort, connector.seatDbName);
  const waitBegan = Date.now();
  let problem: string | undefined = 'not checked yet';
  try {
    await waitFor(
      async () => {
        problem = standbySlotProblem(connector.slotName, await slotOnNode(onStandby, connector.slotName));
        return problem === undefined;
      },
      {
        timeoutMs: SLOT_SYNC_TIMEOUT_MS,
        intervalMs: 500,
        description: `slot ${connector.slotName} synchronized and sync-ready on the standby`,
      },
    );
  } catch {
    throw new Error(
      `not killed: ${problem ?? "the standby's slot is not usable"} (waited ${SLOT_SYNC_TIMEOUT_MS / 1000} s); a failover now would lose the slot`,
    );
  }
  if (Date.now() - waitBegan > 1000)
    run.notes.push(
      `waited ${((Date.now() - waitBegan) / 1000).toFixed(1)} s for the standby's copy of slot ${connector.slotName} to be sync-ready before the kill`,
    );
  const primary = component(layout, 'postgres');
  // Down for good: the promoted standby is the primary now, and two primaries must never run.
  context.supervisor.hold(primary.name);
  run.killedAt = Date.now();
  const pid = await killComponent(primary);
  log.warn({ pid }, "drill: the primary's postmaster killed with -9");
  await waitFor(async () => !(await primary.healthy()), {
    timeoutMs: 30_000,
    intervalMs: 200,
    description: 'the killed primary to stop answering',
  });
  await sleep(context.downMs);
  run.restartedAt = Date.now();
  const report = await failOver(layout, connector, log, { stopPrimary: false });
  const lsn = await currentLsn(report.newPrimaryPort, connector.seatDbName);
  await waitFor(() => slotPassed(report.newPrimaryPort, connector, lsn), {
    timeoutMs: BACK_TIMEOUT_MS,
    intervalMs: 500,
    description: `Debezium to confirm WAL of the new timeline (slot ${connector.slotName} past ${lsn} on port ${report.newPrimaryPort})`,
  });
  run.notes.push(
    `standby promoted: primary on port ${report.newPrimaryPort}, timeline ${report.timeline}; connector ${connector.connectorName} moved with its failover slot ` +
      `(${report.slotBeforePromotion.synced ? 'synchronized' : 'not synchronized'} before the promotion), streaming again ${((Date.now() - run.killedAt) / 1000).toFixed(1)} s after the kill`,
  );
  await confirmNothingLost(context, connector, report.newPrimaryPort, run, log);
}

/**
 * The failover runbook's last step (docs/failover.md, "Confirming nothing is lost"): reconcile the
 * new primary's outbox against every inbox, and re-emit what some inbox lacks. Replication is
 * asynchronous, so a consumer's last commits before the kill (its inbox rows and effects, on the
 * same cluster) may be missing from the new timeline while Kafka has its offsets: only a re-emit
 * brings those events back (the lost-slot recovery's code, with a healthy slot).
 */
async function confirmNothingLost(
  context: DrillContext,
  connector: ConnectorConfig,
  newPrimaryPort: number,
  run: DrillRun,
  log: Logger,
): Promise<void> {
  const env = {
    CONNECT_URL: context.connect.connectUrl,
    CONNECT_USERNAME: context.connect.connectUsername,
    CONNECT_PASSWORD: context.connect.connectPassword,
    CONNECTOR_NAME: connector.connectorName,
    SLOT_RECOVERY_SEAT_DB_URL: `postgres://stagefront_debezium:${LOCAL_ROLE_PASSWORDS.debezium}@127.0.0.1:${newPrimaryPort}/${connector.seatDbName}`,
    RECONCILE_CONSUMER_DB_URL: context.consumerAdminUrl,
    // Judged once the consumers had a few seconds: older events an inbox lacks are gaps.
    RECONCILE_GRACE_MS: '5000',
    SLOT_RECOVERY_SAFETY_MARGIN_MS: '5000',
    SLOT_RECOVERY_VERIFY_TIMEOUT_MS: String(BACK_TIMEOUT_MS),
  };
  const outcome = await recoverLostSlot(parseSettings(slotRecoverySettings, env), { since: 'auto', apply: true }, log);
  if (outcome.since === undefined) {
    run.notes.push('reconciled after the failover: every inbox had every event of the new timeline');
    return;
  }
  if (outcome.verification?.gaps === true)
    throw new Error(
      `events of the new timeline still missing from an inbox after the re-emit from ${outcome.since.toISOString()}`,
    );
  run.notes.push(
    `reconciled after the failover: an inbox lacked events of the new timeline (a consumer's commits the standby never received); re-emitted from ${outcome.since.toISOString()}, every inbox has them now`,
  );
}

/** How long a killed instance with survivors stays down at most, waiting for one of them to take its work over. */
const TAKEOVER_TIMEOUT_MS = 60_000;

/**
 * Polls until a survivor holds the victim's work; records who and when. The victim stays down
 * until then (at most TAKEOVER_TIMEOUT_MS): on a redundant stack the drill proves the survivors
 * take over, not merely that the victim comes back.
 */
async function awaitTakeover(victim: Victim, run: DrillRun): Promise<void> {
  if (victim.takenOverBy === undefined) return;
  const check = victim.takenOverBy;
  let by: string | undefined;
  try {
    await waitFor(
      async () => {
        by = await check().catch(() => undefined);
        return by !== undefined;
      },
      { timeoutMs: TAKEOVER_TIMEOUT_MS, intervalMs: 250, description: `a survivor to take over from ${victim.name}` },
    );
    run.takenOverBy = by ?? null;
    run.takenOverAt = Date.now();
    run.notes.push(`${by} took the work over ${((Date.now() - run.killedAt) / 1000).toFixed(1)} s after the kill`);
  } catch {
    run.takenOverBy = null;
    run.takenOverAt = null;
    run.notes.push(
      `no survivor took the work over within ${TAKEOVER_TIMEOUT_MS / 1000} s; started ${victim.name} again`,
    );
  }
}

function takeoverContext(context: DrillContext): TakeoverContext {
  return {
    layout: context.layout,
    connect: context.connect,
    connectorName: context.connectorName,
    topics: context.topics,
    instancesOf: context.instancesOf,
    pidOf: (program) => {
      const child = context.programs.names().includes(program) ? context.programs.get(program).child : undefined;
      return child === undefined || child.exitCode !== null || child.signalCode !== null ? undefined : child.pid;
    },
    logger: context.logger,
  };
}

/** How long a drill keeps asking the cluster which instance does the work (a rebalance may be under way). */
const IDENTIFY_TIMEOUT_MS = 20_000;

/**
 * The instance a drill of `target` kills: the one doing the work where there are several
 * (rehearsal/drill-takeover.ts). When the cluster does not say within IDENTIFY_TIMEOUT_MS, the first
 * instance is killed and `unknown` says why: the drill then fails, since nobody can tell whether a
 * survivor took the work over.
 */
async function victimOf(
  target: DrillTarget,
  consumerTurn: number,
  context: DrillContext,
): Promise<Victim & { unknown?: string }> {
  const consumer = context.consumers[consumerTurn % context.consumers.length] ?? 'consumer';
  if (target === 'connect' || target === 'kafka' || target === 'consumer') {
    let why = 'not asked yet';
    let chosen: Victim | undefined;
    try {
      await waitFor(
        async () => {
          try {
            chosen = await chooseVictim(takeoverContext(context), target, consumer);
            return true;
          } catch (err) {
            why = errorMessage(err);
            return false;
          }
        },
        { timeoutMs: IDENTIFY_TIMEOUT_MS, intervalMs: 1000, description: `which ${target} instance does the work` },
      );
    } catch {
      context.logger.warn({ target, why }, 'drill: could not tell which instance does the work; killing the first');
    }
    if (chosen !== undefined) return chosen;
    const first = target === 'consumer' ? consumer : target;
    return { name: first, unknown: `could not tell which instance does the work (${why}); killed ${first}` };
  }
  if (target === 'sweeper') return { name: context.sweeper };
  if (target === 'failover') return { name: 'postgres (primary)' };
  return { name: COMPONENT_OF[target] ?? target };
}

/** Kills one part with -9, leaves it down for downMs (and, with survivors, until one took its work over), starts it again and waits until it answers. */
async function runDrill(
  target: DrillTarget,
  consumerTurn: number,
  context: DrillContext,
  atKill: () => void,
): Promise<DrillRun> {
  const chosen = await victimOf(target, consumerTurn, context);
  const victim = chosen.name;
  const isComponent = target !== 'consumer' && target !== 'sweeper' && target !== 'failover';
  const log = context.logger.child({ drill: target, victim });
  const run: DrillRun = {
    target,
    victim,
    killedAt: Date.now(),
    restartedAt: null,
    backAt: null,
    caughtUpAt: null,
    notes: chosen.why === undefined ? [] : [`killed ${victim}: it ${chosen.why}`],
  };
  if (chosen.unknown !== undefined) {
    run.takenOverBy = null;
    run.takenOverAt = null;
    run.notes.push(chosen.unknown);
  }
  try {
    if (target === 'failover') {
      atKill();
      await failoverDrill(context, run, log);
    } else if (isComponent) {
      const stackPart = component(context.layout, victim);
      await heldDown(context.supervisor, victim, async () => {
        atKill();
        run.killedAt = Date.now();
        const pid = await killComponent(stackPart);
        log.warn({ pid }, 'drill: killed with -9');
        await Promise.all([sleep(context.downMs), awaitTakeover(chosen, run)]);
        run.restartedAt = Date.now();
      });
      if (target !== 'registry') await connectorBack(context, run.notes);
    } else {
      await heldDown(context.supervisor, victim, async () => {
        atKill();
        run.killedAt = Date.now();
        await context.programs.get(victim).kill();
        log.warn('drill: killed with -9');
        await Promise.all([sleep(context.downMs), awaitTakeover(chosen, run)]);
        run.restartedAt = Date.now();
      });
    }
    run.backAt = Date.now();
    log.warn({ downSeconds: (run.backAt - run.killedAt) / 1000 }, 'drill: back');
  } catch (err) {
    run.notes.push(`did not come back: ${errorMessage(err)}`);
    log.error({ err }, 'drill: did not come back');
  }
  return run;
}

/**
 * The victim out of the supervisor's hands while `down` kills it and keeps it down, then given back,
 * which starts it; also when `down` failed half way, so that no part leaves supervision for good.
 */
async function heldDown(supervisor: Supervisor, victim: string, down: () => Promise<void>): Promise<void> {
  supervisor.hold(victim);
  try {
    await down();
  } catch (err) {
    await supervisor.release(victim).catch(() => undefined);
    throw err;
  }
  await supervisor.release(victim);
}

/** How long a drill waits for the consumers to catch up after its part is back before the next one may strike. */
const CATCH_UP_TIMEOUT_MS = 120_000;

/**
 * Waits until the consumers have caught up after a drill: total lag no more than twice what it was
 * at the kill, and at most 50 events (a crowd keeps some events in flight all the time).
 */
async function catchUp(run: DrillRun, lagAtKill: number, lag: () => number | undefined): Promise<void> {
  const enough = Math.max(50, 2 * lagAtKill);
  try {
    await waitFor(
      () => {
        const now = lag();
        return now !== undefined && now <= enough;
      },
      {
        timeoutMs: CATCH_UP_TIMEOUT_MS,
        intervalMs: 250,
        description: `the consumers to catch up (lag at most ${enough})`,
      },
    );
    run.caughtUpAt = Date.now();
  } catch {
    run.notes.push(
      `the consumers had not caught up ${CATCH_UP_TIMEOUT_MS / 1000} s after it was back (lag ${lag() ?? 'unknown'})`,
    );
  }
}

/**
 * Runs the drills one after the other, drill k halfway through the crowd's phase k (see
 * CrowdSchedule). The next phase of buyers opens once the drill's part is back and the consumers
 * have caught up, so each drill's effect is its own and not the sum of two.
 * `lag` is the total lag of the latest sample (undefined before the first).
 */
export async function runDrills(
  targets: readonly DrillTarget[],
  schedule: CrowdSchedule,
  context: DrillContext,
  lag: () => number | undefined,
): Promise<DrillRun[]> {
  const runs: DrillRun[] = [];
  let consumerTurn = 0;
  for (const [k, target] of targets.entries()) {
    const at = await schedule.strikeAt(k);
    if (at > Date.now()) await sleep(at - Date.now());
    let lagAtKill = 0;
    const run = await runDrill(target, consumerTurn, context, () => (lagAtKill = lag() ?? 0));
    if (run.backAt !== null) await catchUp(run, lagAtKill, lag);
    runs.push(run);
    schedule.drillDone(k);
    if (target === 'consumer') consumerTurn += 1;
  }
  if (runs.some((r) => r.backAt === null)) await bringEverythingBack(context);
  return runs;
}

/**
 * After a drill whose part did not come back: every stack component started again where it is not
 * healthy (the launcher's idempotent start) and every program of the rehearsal that is not running.
 * Whatever runs after the rehearsal (the next test, the next run) finds the stack whole.
 */
async function bringEverythingBack(context: DrillContext): Promise<void> {
  // One hand at a time: the supervisor starts nothing while the launcher does.
  await context.supervisor.pause();
  try {
    await startEverythingMissing(context);
  } finally {
    context.supervisor.resume();
  }
}

async function startEverythingMissing(context: DrillContext): Promise<void> {
  if (existsSync(join(postgresHome(context.layout), FAILED_OVER_MARKER))) {
    // The former primary must not start again (two primaries): the rest of the stack still runs.
    context.logger.warn(
      'the seat database failed over: the former primary is left down (npm run stack -- start refuses it)',
    );
  } else {
    await startStack(context.logger, context.layout);
  }
  for (const name of context.programs.names()) {
    const child = context.programs.get(name).child;
    if (child.exitCode !== null || child.signalCode !== null) await context.programs.restart(name);
  }
}
