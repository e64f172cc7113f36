/**
 * Each drill of a run as the record keeps it, with its verdict: nothing lost across the drill (the
 * reconciliation of the events written from its kill until the next drill's), nothing doubled (the
 * run's no-double checks) and its part back. The rehearsal computes it once the run is over; tests
 * feed it broken states to see it fail.
 */
import type { Pool } from '../lib/postgres.js';
import { reconcileRun, type Check } from './consistency.js';
import { brokenPromises, promisedAlerts } from './drill-alerts.js';
import { freshAt, FRESH_LIMIT_MS, FRESHNESS_CONSUMER, type FreshnessInput, staleAtEnd } from './freshness.js';
import { drillFreshBudgetMs, overBudget, slowestStage } from './objectives.js';
import { endToEndMs, type EventTimes } from './stages.js';
import type { DrillRun } from './drills.js';
import type { AlertRecord, DrillRecord } from './record.js';
import type { Sampler } from './sampler.js';

/** A drill's alerts: those that began from its kill until this long after its part was back. */
const DRILL_ALERT_WINDOW_MS = 120_000;

export interface DrillScope {
  seatPool: Pool;
  consumerPool: Pool;
  until: Date;
  finishedAt: number;
  checks: Check[];
  sampler: Pick<Sampler, 'peakLag'>;
  alerts: AlertRecord[];
  /** The stack Prometheus's scrape and evaluation interval: when a drill was away long enough to promise an alert. */
  prometheusIntervalMs: number;
  /** What the seat availability consumer received and when (time to fresh); undefined: it received nothing. */
  freshness: FreshnessInput | undefined;
  /** Every event of the run with its steps' times: where a drill that went over its budget lost the time. */
  events: readonly EventTimes[];
  /** How long each killed part was left down (REHEARSAL_DRILL_DOWN_MS): part of each drill's budget. */
  downMs: number;
  /** REHEARSAL_JUDGE_FRESHNESS: false leaves the budget out of the verdict (time to fresh still recorded). */
  judgeFreshness: boolean;
}

/**
 * Each drill with its effect: the peak lag from its kill until the next drill's (or the end), the alerts that began from its kill
 * until 2 minutes after it was back (or the next drill's kill, if sooner), and its verdict: the reconciliation of the events written from
 * its kill until the next drill's (nothing lost), with the run's no-double checks (seats, read
 * model, ledger, emails).
 */
export async function drillRecords(runs: DrillRun[], scope: DrillScope): Promise<DrillRecord[]> {
  const doubles = scope.checks.filter((c) => /sold twice|read model|ledger|email/.test(c.name));
  const records: DrillRecord[] = [];
  for (const [i, run] of runs.entries()) {
    const next = runs[i + 1]?.killedAt;
    const window = await reconcileRun(
      scope.seatPool,
      scope.consumerPool,
      new Date(run.killedAt),
      next === undefined ? scope.until : new Date(next),
    );
    const counts = window.consumers.map((c) => `${c.consumer.name} ${c.handled}/${c.published}`).join(', ');
    const failed = doubles.filter((c) => !c.ok).map((c) => c.name);
    // Up to 2 minutes after it was back, but not into the next drill: each alert belongs to one drill.
    const alertEnd = Math.min((run.backAt ?? scope.finishedAt) + DRILL_ALERT_WINDOW_MS, next ?? Infinity);
    const promised =
      run.backAt === null ? [] : promisedAlerts(run.target, run.backAt - run.killedAt, scope.prometheusIntervalMs);
    const broken = brokenPromises(run, scope.alerts, scope.prometheusIntervalMs, alertEnd, scope.finishedAt);
    const until = next ?? scope.finishedAt;
    const fresh = scope.freshness === undefined ? null : freshAt(scope.freshness, run.killedAt, until);
    const freshBudgetMs = scope.judgeFreshness ? drillFreshBudgetMs(run.target, scope.downMs) : undefined;
    const stale =
      scope.judgeFreshness && scope.freshness !== undefined && staleAtEnd(scope.freshness, run.killedAt, until);
    const over = overBudget({ killedAt: run.killedAt, freshAt: fresh, freshBudgetMs, staleAtEnd: stale });
    const noTakeover = run.takenOverBy === null;
    const ok =
      !window.gaps && failed.length === 0 && run.backAt !== null && broken.length === 0 && over === null && !noTakeover;
    const promises =
      promised.length === 0
        ? ''
        : broken.length === 0
          ? `; raised and resolved the alerts it promises (${promised.join(', ')})`
          : `; FAILED its alert promises: ${broken.join('; ')}`;
    records.push({
      target: run.target,
      victim: run.victim,
      killedAt: run.killedAt,
      restartedAt: run.restartedAt,
      backAt: run.backAt,
      caughtUpAt: run.caughtUpAt,
      ...(run.takenOverBy === undefined ? {} : { takenOverBy: run.takenOverBy, takenOverAt: run.takenOverAt ?? null }),
      freshAt: fresh,
      ...(freshBudgetMs === undefined ? {} : { freshBudgetMs }),
      ...(stale ? { staleAtEnd: true } : {}),
      peakLag: scope.sampler.peakLag(run.killedAt, next),
      alerts: [
        ...new Set(scope.alerts.filter((a) => a.startsAt >= run.killedAt && a.startsAt <= alertEnd).map((a) => a.name)),
      ],
      verdict: {
        ok,
        detail: `${run.victim}: events written from the kill ${next === undefined ? 'to the end' : 'to the next drill'} handled ${counts} (reconciliation)${failed.length === 0 ? '; nothing sold, booked or emailed twice' : `; FAILED: ${failed.join(', ')}`}${run.backAt === null ? '; never came back' : ''}${noTakeover ? '; FAILED: no survivor took its work over' : run.takenOverBy === undefined ? '' : `; ${run.takenOverBy} took its work over`}${promises}${over === null ? '' : `; ${over}${staleIn(scope.events, run.killedAt, until)}`}`,
      },
      ...(promised.length === 0 ? {} : { promisedAlerts: promised }),
      notes: run.notes,
    });
  }
  return records;
}

/** ", stale mostly in <step>": where the availability events that arrived slow in [from, to) lost their time. */
function staleIn(events: readonly EventTimes[], from: number, to: number): string {
  const slow = events.filter(
    (e) =>
      e.consumer === FRESHNESS_CONSUMER && e.received >= from && e.received < to && endToEndMs(e) >= FRESH_LIMIT_MS,
  );
  const stage = slowestStage(slow);
  return stage === null ? '' : `, stale mostly in ${stage}`;
}
