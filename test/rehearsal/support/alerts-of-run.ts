/**
 * Which alerts seen around a rehearsal are the run's (test/rehearsal/alert-precision.test.ts).
 * Pure, so each boundary is shown in test/unit/rehearsal/alerts-of-run.test.ts.
 *
 * On a long-lived Prometheus (CI's) the rehearsal's programs are stopped between two runs, so the
 * alerts about them (OWN_PROGRAM_ALERTS: `ConsumerDown` and the like) fire then, and resolve once
 * Prometheus scrapes the programs again. Two rules say what is not the run's, nothing else is
 * exempt:
 *   1. an alert already firing before the run began: it began before;
 *   2. one of OWN_PROGRAM_ALERTS that stops firing within one scrape and one rule evaluation
 *      interval after Prometheus first saw every program of the rehearsal up: that is the stop
 *      between two runs, resolved by the first evaluation that could see the programs back.
 * Every other alert firing at some moment of the run is the run's.
 */
import { OWN_PROGRAM_ALERTS } from '../../../rehearsal/alerts.js';

/** One alert (a name and its labels) from when it was first to when it was last seen firing. */
export interface AlertSpan {
  name: string;
  labels: string;
  firstFiringMs: number;
  lastFiringMs: number;
}

export interface RunWindow {
  startedAtMs: number;
  finishedAtMs: number;
  /** When Prometheus had scraped every program of the rehearsal up (see programsUpAt). */
  programsUpAtMs: number;
  /** One scrape interval plus one rule evaluation interval of the Prometheus that judged. */
  settleMs: number;
}

/** Why `span` is not the run's alert, or undefined when it is. */
export function notTheRuns(span: AlertSpan, window: RunWindow): string | undefined {
  if (span.lastFiringMs < window.startedAtMs || span.firstFiringMs > window.finishedAtMs)
    return 'not firing during the run';
  if (span.firstFiringMs < window.startedAtMs) return 'already firing before the run began';
  if (
    (OWN_PROGRAM_ALERTS as readonly string[]).includes(span.name) &&
    span.lastFiringMs <= window.programsUpAtMs + window.settleMs
  )
    return "about the rehearsal's programs, resolved within a scrape and an evaluation of their coming up";
  return undefined;
}

/** The spans that are the run's alerts. */
export function alertsOfTheRun(spans: readonly AlertSpan[], window: RunWindow): AlertSpan[] {
  return spans.filter((span) => notTheRuns(span, window) === undefined);
}

/**
 * When one scrape target was up again for the run: its first `up` sample of 1 after its last
 * sample of 0 before `beforeMs` (the run's start); its first sample of 1 when it was never down
 * before then; undefined when it was never seen up.
 */
export function upSince(
  samples: readonly (readonly [timeMs: number, up: number])[],
  beforeMs: number,
): number | undefined {
  let lastDown = -Infinity;
  for (const [t, v] of samples) if (v === 0 && t < beforeMs) lastDown = t;
  return samples.find(([t, v]) => v === 1 && t > lastDown)?.[0];
}

/** When Prometheus had seen every target up for the run: the latest of their upSince; undefined if one never was. */
export function programsUpAt(
  targets: readonly (readonly (readonly [number, number])[])[],
  beforeMs: number,
): number | undefined {
  let latest = -Infinity;
  for (const samples of targets) {
    const since = upSince(samples, beforeMs);
    if (since === undefined) return undefined;
    latest = Math.max(latest, since);
  }
  return targets.length === 0 ? undefined : latest;
}
