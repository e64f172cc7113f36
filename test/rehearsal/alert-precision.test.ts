/**
 * Alert precision against the real thing: a rehearsal without drills that lasts several minutes,
 * with every program of the pipeline running and the stack's Prometheus and Alertmanager
 * evaluating the project's own rules, raises no alert at all. On-call woken for nothing learns to
 * ignore the page: a rule whose threshold sits below the scrape interval, or a condition that is
 * true whenever the pipeline is merely working, shows up here and nowhere else (the promtool tests
 * feed synthetic series).
 *
 * The verdict is the test's own, from two sources independent of the rehearsal: Prometheus's
 * ALERTS series over the run (every rule-based alert), and the test's own poll of Alertmanager
 * (alerts the monitors send themselves as well). An alert already firing when the run began is not
 * the run's. Positive controls: Prometheus's always-firing Watchdog rule is seen by the same query,
 * and Prometheus scraped every program of the rehearsal during the run, so the rules had data.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SCRAPE_PORTS } from '../../stack/prometheus-config.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { type RehearsalOutcome, runRehearsal } from './support/run-rehearsal.js';

const stack = requireStack();

const reportDir = mkdtempSync(join(tmpdir(), 'stagefront-alert-precision-'));
afterAll(() => rmSync(reportDir, { recursive: true, force: true }));

/** How long the crowd keeps arriving: several Prometheus scrape and rule intervals, and every `for:` of a minute or two. */
const ARRIVAL_MS = 180_000;

interface AlertmanagerAlert {
  labels: Record<string, string>;
  startsAt: string;
}

/** The test's own poll of Alertmanager: every alert seen active, by name, with its startsAt. */
function pollAlertmanager(url: string): { stop: () => Promise<Map<string, number>> } {
  const seen = new Map<string, number>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const response = await fetch(`${url}/api/v2/alerts?active=true&silenced=true&inhibited=true`);
        if (response.ok) {
          for (const alert of (await response.json()) as AlertmanagerAlert[]) {
            const name = alert.labels.alertname ?? '?';
            const key = `${name} ${JSON.stringify(alert.labels)}`;
            const startsAt = Date.parse(alert.startsAt);
            if (!seen.has(key) || seen.get(key)! > startsAt) seen.set(key, startsAt);
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
      return seen;
    },
  };
}

interface RangeSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

async function queryRange(query: string, startS: number, endS: number): Promise<RangeSeries[]> {
  const params = new URLSearchParams({ query, start: String(startS), end: String(endS), step: '5' });
  const response = await fetch(`${stack.prometheusUrl}/api/v1/query_range?${params}`);
  const body = (await response.json()) as { status: string; error?: string; data?: { result: RangeSeries[] } };
  if (body.status !== 'success' || body.data === undefined) {
    throw new Error(`Prometheus query ${query} failed: ${body.error ?? response.status}`);
  }
  return body.data.result;
}

describe('a several-minute rehearsal with nothing wrong', () => {
  it('raises no alert: none begins in Prometheus or Alertmanager while the crowd buys', async () => {
    const show = uniqueName('quiet').replace(/_/g, '-');
    const poll = pollAlertmanager(stack.alertmanagerUrl);
    let outcome: RehearsalOutcome;
    let polled: Map<string, number>;
    try {
      // Throws unless the rehearsal exited 0 and wrote its reports.
      outcome = await runRehearsal({
        show,
        lockTimeoutS: 300,
        env: {
          REHEARSAL_BUYERS: '360',
          REHEARSAL_CONCURRENCY: '4',
          REHEARSAL_ARRIVAL_MS: String(ARRIVAL_MS),
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
    // The precondition of "several minutes": the crowd arrived over the whole time asked for.
    expect(record.finishedAt - record.startedAt).toBeGreaterThanOrEqual(ARRIVAL_MS);

    const startS = Math.ceil(record.startedAt / 1000);
    const endS = Math.floor(record.finishedAt / 1000);

    // Positive control: every program of the rehearsal was scraped during the run.
    const up = await queryRange('up', startS, endS);
    const scrapedJobs = new Set(up.filter((s) => s.values.some(([, v]) => v === '1')).map((s) => s.metric.job));
    expect([...scrapedJobs].sort()).toEqual(expect.arrayContaining(Object.keys(SCRAPE_PORTS).sort()));

    // Prometheus: every alert firing at some point of the run that was not firing at its start.
    const firing = await queryRange('ALERTS{alertstate="firing"}', startS, endS);
    expect(
      firing.some((s) => s.metric.alertname === 'Watchdog'),
      'positive control: the always-firing Watchdog rule',
    ).toBe(true);
    const begunInPrometheus = firing
      .filter((s) => s.metric.alertname !== 'Watchdog')
      .filter((s) => (s.values[0]?.[0] ?? 0) > startS + 5)
      .map(
        (s) =>
          `${s.metric.alertname} ${JSON.stringify(s.metric)} from ${new Date(s.values[0]![0] * 1000).toISOString()}`,
      );
    expect(begunInPrometheus, 'alerts Prometheus fired during a run in which nothing was wrong').toEqual([]);

    // Alertmanager, as the test polled it: alerts that began during the run (the monitors' own too).
    const begunInAlertmanager = [...polled.entries()]
      .filter(([key]) => !key.startsWith('Watchdog '))
      .filter(([, startsAt]) => startsAt >= record.startedAt && startsAt <= record.finishedAt)
      .map(([key, startsAt]) => `${key} from ${new Date(startsAt).toISOString()}`);
    expect(begunInAlertmanager, 'alerts Alertmanager received during a run in which nothing was wrong').toEqual([]);
    expect(
      [...polled.keys()].some((key) => key.startsWith('Watchdog ')),
      'positive control: the poll saw a Watchdog heartbeat',
    ).toBe(true);
  }, 480_000);
});
