/**
 * Alert precision against the real thing: a rehearsal without drills that lasts longer than every
 * rule of up to two minutes' `for` takes to fire, with every program of the pipeline running and
 * the stack's Prometheus and Alertmanager evaluating the project's own rules, raises no alert at
 * all. On-call woken for nothing learns to ignore the page: a condition that is true whenever the
 * pipeline is merely working shows up here and nowhere else (the promtool tests feed synthetic
 * series). A threshold below the scrape interval shows up here at the interval this Prometheus
 * runs with (5 s on the stack test:all starts); test/unit/alerts holds every rule to the 15 s of
 * the stack, compose and Kubernetes.
 *
 * The verdict is the test's own, from two sources independent of the rehearsal: Prometheus's
 * ALERTS series over the run (every rule-based alert), and the test's own poll of Alertmanager
 * (alerts the monitors send themselves as well). Which alerts are the run's is one small rule
 * (support/alerts-of-run.ts): not one already firing before the run began, nor an alert about the
 * rehearsal's own programs (stopped between two runs) that resolves within a scrape and an
 * evaluation interval of Prometheus seeing them up again. Positive controls: Prometheus's
 * always-firing Watchdog rule is seen by the same query, and Prometheus scraped every program of
 * the rehearsal up for the run, so the rules had data.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ALL_ALERTS } from '../../monitors/alerts/catalog.js';
import { durationSeconds } from '../../monitors/alerts/rule-intervals.js';
import { SCRAPE_PORTS } from '../../stack/prometheus-config.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { type AlertSpan, alertsOfTheRun, programsUpAt } from './support/alerts-of-run.js';
import { prometheusIntervalsMs } from '../../stack/prometheus-intervals.js';
import { queryRange, spansOf } from './support/prometheus-alerts.js';
import { type RehearsalOutcome, runRehearsal } from './support/run-rehearsal.js';

const stack = requireStack();

const reportDir = mkdtempSync(join(tmpdir(), 'stagefront-alert-precision-'));
afterAll(() => rmSync(reportDir, { recursive: true, force: true }));

/**
 * The longest `for` the run outlasts: that of the rules of up to two minutes. A rule of 5 or 10
 * minutes cannot fire within a rehearsal of minutes; its condition is the promtool tests' business.
 */
const CAUGHT_FOR_MS = Math.max(
  ...Object.values(ALL_ALERTS).flatMap((spec) => {
    const forMs = spec.rule?.for === undefined ? 0 : durationSeconds(spec.rule.for) * 1000;
    return forMs <= 120_000 ? [forMs] : [];
  }),
);
/**
 * Beyond CAUGHT_FOR_MS and Prometheus's scrape and evaluation: the programs start and settle, and
 * a two-minute rule whose condition turns true up to this long into the run still fires within it.
 */
const ARRIVAL_SLACK_MS = 30_000;
/** Buyers per second of the arrival: a steady trickle, never a peak. */
const BUYERS_PER_SECOND = 2;
/** How far before the run the test looks, to tell an alert that was firing already. */
const LOOK_BEFORE_S = 120;

interface AlertmanagerAlert {
  labels: Record<string, string>;
  startsAt: string;
}

/**
 * The test's own poll of Alertmanager: every alert seen active, from its startsAt to the last poll
 * that saw it (one span each time it fired: a new startsAt).
 */
function pollAlertmanager(url: string): { stop: () => Promise<AlertSpan[]> } {
  const seen = new Map<string, AlertSpan>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const response = await fetch(`${url}/api/v2/alerts?active=true&silenced=true&inhibited=true`);
        if (response.ok) {
          const now = Date.now();
          for (const alert of (await response.json()) as AlertmanagerAlert[]) {
            const name = alert.labels.alertname ?? '?';
            const labels = JSON.stringify(alert.labels);
            const startsAt = Date.parse(alert.startsAt);
            seen.set(`${name} ${labels} ${startsAt}`, { name, labels, firstFiringMs: startsAt, lastFiringMs: now });
          }
        }
      } catch {
        // Alertmanager busy for a moment: the next poll sees what this one missed (alerts last).
      }
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return [...seen.values()];
    },
  };
}

const describeSpan = (s: AlertSpan) =>
  `${s.name} ${s.labels} from ${new Date(s.firstFiringMs).toISOString()} to ${new Date(s.lastFiringMs).toISOString()}`;

describe('a rehearsal of minutes with nothing wrong', () => {
  it('raises no alert: none begins in Prometheus or Alertmanager while the crowd buys', async () => {
    const show = uniqueName('quiet').replace(/_/g, '-');
    // As the running Prometheus has them: how long a condition true from the start takes to fire.
    const { scrapeMs, evaluationMs } = await prometheusIntervalsMs(stack.prometheusUrl);
    // The crowd keeps arriving until every rule of up to two minutes could have fired.
    const arrivalMs = CAUGHT_FOR_MS + scrapeMs + evaluationMs + ARRIVAL_SLACK_MS;
    // Spread evenly: buyer i of n arrives at i/n of it, the last at (n-1)/n.
    const buyers = Math.round((arrivalMs / 1000) * BUYERS_PER_SECOND);
    const poll = pollAlertmanager(stack.alertmanagerUrl);
    let outcome: RehearsalOutcome;
    let polled: AlertSpan[];
    try {
      // Throws unless the rehearsal exited 0 and wrote its reports.
      outcome = await runRehearsal({
        show,
        lockTimeoutS: 300,
        env: {
          REHEARSAL_BUYERS: String(buyers),
          REHEARSAL_CONCURRENCY: '4',
          REHEARSAL_ARRIVAL_MS: String(arrivalMs),
          REHEARSAL_HOLD_TTL_MS: '8000',
          REHEARSAL_COUNTDOWN_MS: '0',
          REHEARSAL_DRILLS: '',
          REHEARSAL_STACK: 'native',
          REHEARSAL_REPORT_DIR: reportDir,
        },
      });
    } finally {
      polled = await poll.stop();
    }
    const { record } = outcome;
    // The precondition of its length: the crowd arrived over the whole time asked for (its
    // last buyer at (n-1)/n of it).
    expect(record.finishedAt - record.startedAt).toBeGreaterThanOrEqual(((buyers - 1) / buyers) * arrivalMs);

    const fromS = Math.floor(record.startedAt / 1000) - LOOK_BEFORE_S;
    const endS = Math.ceil(record.finishedAt / 1000);

    // Positive control: Prometheus scraped every program of the rehearsal up for the run.
    const jobs = Object.keys(SCRAPE_PORTS);
    const up = (await queryRange(stack.prometheusUrl, 'up', fromS, endS)).filter((s) =>
      jobs.includes(s.metric.job ?? ''),
    );
    const scrapedJobs = new Set(up.filter((s) => s.values.some(([, v]) => v === '1')).map((s) => s.metric.job));
    expect([...scrapedJobs].sort()).toEqual(jobs.sort());
    const programsUpAtMs = programsUpAt(
      up.map((s) => s.values.map(([t, v]) => [t * 1000, Number(v)] as const)),
      record.startedAt,
    );
    expect(programsUpAtMs, 'every program of the rehearsal seen up').toBeDefined();
    const window = {
      startedAtMs: record.startedAt,
      finishedAtMs: record.finishedAt,
      programsUpAtMs: programsUpAtMs!,
      // One scrape interval plus one rule evaluation interval.
      settleMs: scrapeMs + evaluationMs,
    };

    // Prometheus: every alert firing at some point of the run that is the run's.
    const firing = await queryRange(stack.prometheusUrl, 'ALERTS{alertstate="firing"}', fromS, endS);
    expect(
      firing.some((s) => s.metric.alertname === 'Watchdog'),
      'positive control: the always-firing Watchdog rule',
    ).toBe(true);
    const runsInPrometheus = alertsOfTheRun(
      firing.filter((s) => s.metric.alertname !== 'Watchdog').flatMap(spansOf),
      window,
    ).map(describeSpan);
    expect(runsInPrometheus, 'alerts Prometheus fired during a run in which nothing was wrong').toEqual([]);

    // Alertmanager, as the test polled it: the run's alerts (the monitors' own too).
    const runsInAlertmanager = alertsOfTheRun(
      polled.filter((s) => s.name !== 'Watchdog'),
      window,
    ).map(describeSpan);
    expect(runsInAlertmanager, 'alerts Alertmanager received during a run in which nothing was wrong').toEqual([]);
    expect(
      polled.some((s) => s.name === 'Watchdog'),
      'positive control: the poll saw a Watchdog heartbeat',
    ).toBe(true);
  }, 480_000);
});
