/**
 * A finished rehearsal as its record and text report: the checks (nothing sold twice, every
 * consumer saw every event exactly once, the read model, ledger and emails agree, no buyer saw an
 * error outside drills, the freshness objectives held), each drill with its effect, the latencies
 * and the alerts.
 */
import { errorMessage } from '../lib/errors.js';
import { percentiles } from '../lib/percentiles.js';
import type { Pool } from '../lib/postgres.js';
import { OWN_PROGRAM_ALERTS } from './alerts.js';
import {
  availabilityCheck,
  emailCheck,
  exactlyOnceChecks,
  ledgerCheck,
  oversoldCheck,
  type Check,
} from './consistency.js';
import type { CrowdOutcome } from './crowd.js';
import type { DrillTarget } from './drill-targets.js';
import { drillRecords } from './drill-verdict.js';
import type { DrillRun } from './drills.js';
import type { SupervisedRestart } from '../stack/supervisor.js';
import type { RehearsalEnvironment } from './environment.js';
import { FRESHNESS_CONSUMER } from './freshness.js';
import { latencyOverTime } from './latency.js';
import type { RehearsalRecord } from './record.js';
import type { OpenRun, ShowOnSale, SoldShow } from './rehearse.js';
import { renderTextReport } from './report.js';
import type { RehearsalConfig } from './settings.js';
import { drillBudgetCheck, drillFreshBudgetMs, objectiveChecks } from './objectives.js';
import { eventTimes, stageLatencies } from './stages.js';

/** Buyer errors this long after a drill's part was back still count as the drill's. */
const DRILL_SETTLE_MS = 10_000;

/** The run's record (what rehearsal-<show>.json holds) and its text report. */
export async function recordRun(
  run: OpenRun,
  show: ShowOnSale,
  sold: SoldShow,
  config: RehearsalConfig,
  drills: DrillTarget[],
): Promise<{ record: RehearsalRecord; text: string }> {
  const { seatPool, consumerPool, alerts, env } = run;
  const { crowd, drillRuns, since, startedAt, finishedAt, sampler } = sold;
  const events = await eventTimes(seatPool, consumerPool, since);
  const { checks, errorsDuring, errorsOutside } = await runChecks(run, show, sold);
  const runAlerts = alerts.during(startedAt, finishedAt);
  const latency = latencyOverTime(events);
  const drillRecordList = await drillRecords(drillRuns, {
    seatPool,
    consumerPool,
    until: sold.until,
    finishedAt,
    checks,
    sampler,
    alerts: runAlerts,
    prometheusIntervalMs: sold.prometheusIntervalMs,
    freshness: latency.find((l) => l.consumer === FRESHNESS_CONSUMER),
    events,
    downMs: config.drillDownMs,
    judgeFreshness: config.judgeFreshness === 'yes',
  });
  const spans = drillRuns.map((d) => ({
    target: d.target,
    killedAt: d.killedAt,
    freshBudgetMs: drillFreshBudgetMs(d.target, config.drillDownMs),
  }));
  if (config.judgeFreshness === 'yes')
    checks.push(
      ...objectiveChecks(events, spans),
      ...(drillRecordList.length > 0 ? [drillBudgetCheck(drillRecordList)] : []),
    );
  const record: RehearsalRecord = {
    showId: show.showId,
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
    stages: stageLatencies(events),
    drills: drillRecordList,
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
      reason: `about the rehearsal's own programs, stopped since the previous run; resolved ${show.waitedSeconds} s after it had started them, before the run began`,
    },
    alertGaps: alerts.gaps(),
    missedSamples: sampler.missed,
    logFiles: env.logFiles(),
  });
  return { record, text };
}

/** The run's checks, and the buyers' errors told apart: during a drill (expected) or outside every drill. */
async function runChecks(
  run: OpenRun,
  show: ShowOnSale,
  sold: SoldShow,
): Promise<{ checks: Check[]; errorsDuring: CrowdOutcome['errors']; errorsOutside: CrowdOutcome['errors'] }> {
  const { seatPool, consumerPool, env } = run;
  const { crowd, drillRuns, finishedAt } = sold;
  const windows = drillRuns.map((d) => ({ from: d.killedAt, to: (d.backAt ?? finishedAt) + DRILL_SETTLE_MS }));
  const inDrill = (at: number) => windows.some((w) => at >= w.from && at <= w.to);
  const errorsDuring = crowd.outcome.errors.filter((e) => inDrill(e.at));
  const errorsOutside = crowd.outcome.errors.filter((e) => !inDrill(e.at));
  const checks: Check[] = [
    await oversoldCheck(seatPool, show.showId),
    ...exactlyOnceChecks(sold.reconciliation),
    await availabilityCheck(seatPool, consumerPool, show.showId),
    await ledgerCheck(seatPool, consumerPool, show.showId),
    await emailCheckOf(env, seatPool, sold.since),
    crowdCheck(crowd.outcome, errorsOutside),
    ...(drillRuns.length > 0 ? [drillsBackCheck(drillRuns)] : []),
    ...(env.mode === 'native' ? [unplannedRestartsCheck(env.unplannedRestarts())] : []),
  ];
  return { checks, errorsDuring, errorsOutside };
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

/** A part that died on its own during the run: the supervisor hid the outage from the crowd, not from the report. */
export function unplannedRestartsCheck(restarts: readonly SupervisedRestart[]): Check {
  const shown = restarts.map((r) => {
    const at = new Date(r.seenDeadAt).toISOString().slice(11, 19);
    const back =
      r.servingAt === undefined
        ? `not back: ${r.error ?? 'still starting'}`
        : `back +${((r.servingAt - r.seenDeadAt) / 1000).toFixed(1)} s`;
    return `${r.name} died at ${at}, ${back}`;
  });
  return {
    name: 'nothing died outside the drills',
    ok: restarts.length === 0,
    detail:
      restarts.length === 0
        ? "the supervisor started nothing again but the drills' victims"
        : `the supervisor started again: ${shown.join('; ')} (their logs say why)`,
  };
}

function machineName(): string {
  return `${process.platform} ${process.arch}, Node ${process.version}`;
}
