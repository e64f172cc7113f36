/**
 * The on-sale rehearsal: the whole pipeline on this machine, a crowd at "10:00" (with fault drills
 * if asked), a live view while it runs, and a report that says whether every seat was sold at most
 * once and every consumer saw every event exactly once: text, JSON record and HTML charts.
 */
import { startProgram as startCli, flagValue } from '../lib/cli.js';
import { PipelineError, errorMessage } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { percentiles } from '../lib/percentiles.js';
import { createPool, type Pool } from '../lib/postgres.js';
import { sleep, waitFor } from '../lib/wait.js';
import { seatDatabaseNow, type Reconciliation } from '../monitors/reconciliation/reconcile.js';
import { createShow } from '../seat-service/inventory.js';
import { openSeatService } from '../seat-service/service.js';
import { parseSections } from '../seat-service/sections.js';
import { AlertWatcher, OWN_PROGRAM_ALERTS } from './alerts.js';
import {
  availabilityCheck,
  emailCheck,
  exactlyOnceChecks,
  ledgerCheck,
  oversoldCheck,
  reconcileRun,
  type Check,
} from './consistency.js';
import { runCrowd, type CrowdOutcome } from './crowd.js';
import { DRILL_TARGETS, parseDrills, type DrillTarget } from './drill-targets.js';
import { drillRecords } from './drill-verdict.js';
import { NO_STANDBY_MESSAGE, runDrills, type DrillRun } from './drills.js';
import type { RehearsalEnvironment } from './environment.js';
import { openExternalEnvironment } from './external.js';
import { createLiveView } from './live-view.js';
import { latencyOverTime } from './latency.js';
import { openNativeEnvironment } from './native.js';
import type { RehearsalRecord } from './record.js';
import { renderTextReport, shownPath, writeReport } from './report.js';
import { Sampler } from './sampler.js';
import { CrowdSchedule } from './schedule.js';
import { parseRehearsalConfig, rehearsalSettings, type RehearsalConfig } from './settings.js';
import { stageLatencies } from './stages.js';
import { stackLayout } from '../stack/config.js';

const USAGE = `Usage: npm run rehearsal [-- --show NAME] [--drill ${DRILL_TARGETS.join(',')}|all]

Starts the native stack, prepares the seat and consumer databases, applies the outbox connector,
starts the three consumers, the hold sweeper, the slot monitor, the job watchdog and a local SMTP
sink, then lets a crowd of buyers press the button at once, shows what happens while it runs, and
reports what happened: rehearsal-<show>.txt, .json and .html in REHEARSAL_REPORT_DIR.

--drill kills each named part with -9 during the crowd and starts it again (in that order, one
after the other); the crowd then arrives over (drills + 1) × REHEARSAL_DRILL_SPACING_MS.
failover (a stack with STACK_POSTGRES_STANDBY=yes) kills the seat database's primary and promotes
its standby: one-way, so never part of all, and only as the last drill.
REHEARSAL_STACK=external runs the crowd against a stack someone else started (docker compose).`;

/** How long the rehearsal waits, after starting its programs, for alerts about them being down to resolve. */
const OWN_ALERTS_WAIT_MS = 60_000;
/** Buyer errors this long after a drill's part was back still count as the drill's. */
const DRILL_SETTLE_MS = 10_000;

function drillsFrom(args: string[], config: RehearsalConfig): DrillTarget[] {
  if (!args.includes('--drill')) return config.drills;
  const value = flagValue(args, 'drill');
  if (value === undefined || value.startsWith('--'))
    throw new PipelineError(
      'bad_argument',
      `--drill needs a list, e.g. --drill connect,consumer (targets: ${DRILL_TARGETS.join(', ')}, or all)`,
    );
  try {
    return parseDrills(value);
  } catch (err) {
    throw new PipelineError('bad_argument', `--drill ${value}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function rehearse(config: RehearsalConfig, args: string[], logger: Logger): Promise<number> {
  let drills: DrillTarget[];
  try {
    drills = drillsFrom(args, config);
    if (drills.length > 0 && config.stack !== 'native') {
      throw new PipelineError(
        'bad_argument',
        `--drill needs REHEARSAL_STACK=native: drills kill the native stack's processes, which an external stack does not have`,
      );
    }
    if (drills.includes('failover') && !stackLayout().settings.postgresStandby)
      throw new PipelineError('bad_argument', `--drill failover: ${NO_STANDBY_MESSAGE}`);
  } catch (err) {
    if (!(err instanceof PipelineError)) throw err;
    console.error(`rehearsal: ${err.message}`);
    return 2;
  }
  const env = config.stack === 'native' ? await openNativeEnvironment(config, logger) : openExternalEnvironment(config);
  const seatPool = createPool({
    connectionString: env.seatAdminUrl,
    applicationName: 'rehearsal-report',
    logger,
    max: 3,
  });
  const consumerPool = createPool({
    connectionString: env.consumerAdminUrl,
    applicationName: 'rehearsal-report',
    logger,
    max: 3,
  });
  const alerts = new AlertWatcher(env.alertmanagerUrl);
  alerts.start();
  let sampler: Sampler | undefined;
  const service = await openSeatService(env.seatConfig, logger);
  try {
    const showId = flagValue(args, 'show') ?? `stadium-${new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '')}`;
    const sections = parseSections(config.sections);
    await createShow(service.pool, {
      showId,
      title: 'Stadium on-sale rehearsal',
      startsAt: new Date(Date.now() + 90 * 86_400_000),
      onSaleAt: new Date(Date.now() + config.countdownMs),
      sections,
    });
    // Between two rehearsals their programs are stopped, and alerts say so; they resolve once
    // Prometheus has scraped the programs again. The run begins after that, so they are not its alerts.
    const waitBegan = Date.now();
    const stillFiring = await alerts.waitForOwnProgramsSeen(OWN_ALERTS_WAIT_MS);
    const waitedSeconds = Math.round((Date.now() - waitBegan) / 1000);
    if (stillFiring.length > 0)
      logger.warn({ alerts: stillFiring }, "alerts about the rehearsal's programs still active; the report lists them");
    logger.info(
      { showId, seats: sections.reduce((n, s) => n + s.rows * s.seatsPerRow, 0), buyers: config.buyers, drills },
      'everything is running; the on-sale opens at "10:00"',
    );
    await sleep(config.countdownMs);

    const since = await seatDatabaseNow(seatPool);
    const startedAt = Date.now();
    const view = createLiveView(process.stdout);
    sampler = new Sampler({
      seatPool,
      consumerPool,
      showId,
      since,
      slotName: env.slotName,
      alerts,
      onSample: (s) => view.update(s),
    });
    sampler.start();
    const quiet = logger.child({}, { level: 'warn' }); // info lines would break the live view's redraw
    const drillContext = drills.length > 0 ? env.drillContext(config.drillDownMs, quiet) : undefined;
    const schedule = new CrowdSchedule(config.buyers, drills.length, config.drillSpacingMs, startedAt);
    const crowdRun = runCrowd(service, showId, sections, { ...config, schedule }).then((outcome) => ({
      outcome,
      ms: Date.now() - startedAt,
    }));
    const [crowd, drillRuns] = await Promise.all([
      crowdRun,
      drillContext === undefined
        ? Promise.resolve([])
        : runDrills(drills, schedule, drillContext, () => sampler?.latestLag()),
    ]);

    const expiryWait = config.holdTtlMs * 3 + 10_000 + (drills.length > 0 ? config.drainTimeoutMs : 0);
    await waitFor(
      async () =>
        (await seatPool.query(`select count(*)::int as n from holds where status = 'active'`)).rows[0].n === 0,
      { timeoutMs: expiryWait, description: 'every abandoned hold to expire' },
    );
    // Every write of the run is in the outbox by now: the reconciliation window ends here.
    const until = new Date((await seatDatabaseNow(seatPool)).getTime() + 1);
    const reconciliation = await waitUntilReconciled(seatPool, consumerPool, since, until, config.drainTimeoutMs);
    await sampler.stop();
    await sampler.sampleOnce();
    view.close();
    await alerts.poll();
    const finishedAt = Date.now();

    const windows = drillRuns.map((d) => ({ from: d.killedAt, to: (d.backAt ?? finishedAt) + DRILL_SETTLE_MS }));
    const inDrill = (at: number) => windows.some((w) => at >= w.from && at <= w.to);
    const errorsDuring = crowd.outcome.errors.filter((e) => inDrill(e.at));
    const errorsOutside = crowd.outcome.errors.filter((e) => !inDrill(e.at));
    const checks: Check[] = [
      await oversoldCheck(seatPool, showId),
      ...exactlyOnceChecks(reconciliation),
      await availabilityCheck(seatPool, consumerPool, showId),
      await ledgerCheck(seatPool, consumerPool, showId),
      await emailCheckOf(env, seatPool, since),
      crowdCheck(crowd.outcome, errorsOutside),
      ...(drillRuns.length > 0 ? [drillsBackCheck(drillRuns)] : []),
    ];
    const runAlerts = alerts.during(startedAt, finishedAt);
    const latency = await latencyOverTime(seatPool, consumerPool, since);
    const record: RehearsalRecord = {
      showId,
      startedAt,
      finishedAt,
      machine: machineName(),
      settings: { buyers: config.buyers, concurrency: config.concurrency, sections: config.sections, drills },
      crowd: {
        buyers: crowd.outcome.buyers,
        confirmed: crowd.outcome.confirmed,
        abandoned: crowd.outcome.abandoned,
        released: crowd.outcome.released,
        seatTaken: crowd.outcome.seatTaken,
        gaveUp: crowd.outcome.gaveUp,
        errors: errorsOutside.length,
        errorsDuringDrills: errorsDuring.length,
        seconds: crowd.ms / 1000,
      },
      samples: sampler.samples,
      latency: latency.map((l) => ({ consumer: l.consumer, points: l.points })),
      stages: await stageLatencies(seatPool, consumerPool, since),
      drills: await drillRecords(drillRuns, {
        seatPool,
        consumerPool,
        until,
        finishedAt,
        checks,
        sampler,
        alerts: runAlerts,
      }),
      alerts: runAlerts,
      checks,
    };
    const hold = percentiles(crowd.outcome.holdLatenciesMs);
    const text = renderTextReport(record, {
      mode: env.mode,
      holdLatencyMs: { p50: Math.round(hold.p50 || 0), p99: Math.round(hold.p99 || 0) },
      latency: latency.map((l) => ({ consumer: l.consumer, ...l.overall })),
      leftOut: {
        alerts: alerts.endedBefore(startedAt).filter((a) => (OWN_PROGRAM_ALERTS as readonly string[]).includes(a.name)),
        reason: `about the rehearsal's own programs, stopped since the previous run; resolved ${waitedSeconds} s after it had started them, before the run began`,
      },
      alertGaps: alerts.gaps(),
      missedSamples: sampler.missed,
      logFiles: env.logFiles(),
    });
    const written = writeReport(config.reportDir, record, text);
    process.stdout.write(text);
    process.stdout.write(
      `\n  report: ${shownPath(written.text)}\n          ${shownPath(written.json)}\n          ${shownPath(written.html)}\n`,
    );
    return checks.every((c) => c.ok) ? 0 : 1;
  } finally {
    await sampler?.stop();
    await alerts.stop();
    await service.close();
    await seatPool.end();
    await consumerPool.end();
    await env.close(config.keepRunning === 'yes');
  }
}

/** Reconciles the run's window every second until no consumer misses an event, or the drain timeout. */
async function waitUntilReconciled(
  seat: Pool,
  consumers: Pool,
  from: Date,
  to: Date,
  timeoutMs: number,
): Promise<Reconciliation> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await reconcileRun(seat, consumers, from, to);
    if (!result.gaps || Date.now() >= deadline) return result;
    await sleep(1000);
  }
}

/** The email check; a mailbox that cannot be read fails the check with the reason instead of losing the report. */
async function emailCheckOf(env: RehearsalEnvironment, seatPool: Pool, since: Date): Promise<Check> {
  try {
    return await emailCheck(seatPool, await env.emailMessageIds(), since);
  } catch (err) {
    return {
      name: 'one confirmation email per order',
      ok: false,
      detail: `the received emails could not be read: ${errorMessage(err)}`,
    };
  }
}

function crowdCheck(outcome: CrowdOutcome, outside: CrowdOutcome['errors']): Check {
  const shown = outside
    .slice(0, 3)
    .map((e) => e.message)
    .join('; ');
  return {
    name: 'no buyer saw an error outside drills, every buyer got an answer',
    ok: outside.length === 0 && outcome.failedBuyers === 0,
    detail: `${outside.length} errors outside drills${shown === '' ? '' : ` (${shown})`}, ${outcome.failedBuyers} buyers without an answer`,
  };
}

function drillsBackCheck(runs: DrillRun[]): Check {
  const notBack = runs.filter((r) => r.backAt === null);
  return {
    name: 'every drilled part came back',
    ok: notBack.length === 0,
    detail:
      notBack.length === 0
        ? `${runs.length} of ${runs.length} back`
        : `not back: ${notBack.map((r) => `${r.victim} (${r.notes.join('; ')})`).join(', ')}`,
  };
}

function machineName(): string {
  return `${process.platform} ${process.arch}, Node ${process.version}`;
}

startCli({ settings: rehearsalSettings, usage: USAGE, main: rehearse, parse: parseRehearsalConfig });
