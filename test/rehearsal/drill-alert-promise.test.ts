/**
 * A drill raises the alert its runbook promises, and it resolves: a rehearsal whose consumer drill
 * keeps the consumer away longer than ConsumerDown takes to fire (`for: 1m`, plus a scrape and an
 * evaluation of the stack's Prometheus), run as a user runs it (`npm run rehearsal -- --drill
 * consumer`). The verdict is the test's own, from Prometheus's ALERTS series: ConsumerDown fired
 * for the killed consumer's target after the kill and stopped firing once it was back. The record
 * must agree: the drill promised ConsumerDown and its verdict says the promise was kept.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { firesWithinMs } from '../../rehearsal/drill-alerts.js';
import { confirmationEmailSettings } from '../../consumers/confirmation-email/consumer.js';
import { salesLedgerSettings } from '../../consumers/sales-ledger/consumer.js';
import { seatAvailabilitySettings } from '../../consumers/seat-availability/consumer.js';
import { stackLayout } from '../../stack/config.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { independentOutcome, stackSources, topicEnds } from './support/independent-outcome.js';
import { prometheusIntervalsMs } from '../../stack/prometheus-intervals.js';
import { queryRange, spansOf } from './support/prometheus-alerts.js';
import { runRehearsal } from './support/run-rehearsal.js';

const stack = requireStack();

/** Where Prometheus scrapes each consumer program: its metrics port's default. */
const CONSUMER_METRICS_PORTS = new Map(
  [seatAvailabilitySettings, confirmationEmailSettings, salesLedgerSettings].map(
    (d) => [d.program, d.settings.metricsPort.default] as const,
  ),
);

const reportDir = mkdtempSync(join(tmpdir(), 'stagefront-drill-alert-'));
afterAll(() => rmSync(reportDir, { recursive: true, force: true }));

describe('a drill long enough to page', () => {
  it('a consumer away for longer than ConsumerDown takes raises ConsumerDown, which resolves once it is back', async () => {
    const show = uniqueName('drillalert').replace(/_/g, '-');
    // As the running Prometheus has them, not as the settings that configured it say.
    const { scrapeMs, evaluationMs } = await prometheusIntervalsMs(stack.prometheusUrl);
    const intervalMs = Math.max(scrapeMs, evaluationMs);
    // Away (down, then starting) at least as long as the alert takes to fire: the promise holds.
    const downMs = firesWithinMs('ConsumerDown', intervalMs) + 5_000;
    const sources = stackSources(stackLayout());
    const from = await topicEnds(sources);
    const { record, tail, text } = await runRehearsal({
      show,
      drills: 'consumer',
      lockTimeoutS: 120,
      env: {
        REHEARSAL_BUYERS: '60',
        REHEARSAL_CONCURRENCY: '8',
        REHEARSAL_COUNTDOWN_MS: '0',
        REHEARSAL_DRILL_SPACING_MS: '10000',
        REHEARSAL_DRILL_DOWN_MS: String(downMs),
        // Correctness and alerts only: a busy machine's time to fresh must not fail this test.
        REHEARSAL_JUDGE_FRESHNESS: 'no',
        REHEARSAL_REPORT_DIR: reportDir,
      },
    });
    const [drill] = record.drills;
    expect(drill?.target).toBe('consumer');
    expect(drill?.backAt ?? null, tail).not.toBeNull();
    const killedAt = drill!.killedAt;
    const port = CONSUMER_METRICS_PORTS.get(drill!.victim ?? '');
    expect(port, `the killed program ${drill!.victim} is one of the consumers`).toBeDefined();

    // From Prometheus, not the record: ConsumerDown fired after the kill for the killed consumer's
    // target and for no other, and no longer fires.
    const series = await queryRange(
      stack.prometheusUrl,
      'ALERTS{alertname="ConsumerDown",alertstate="firing"}',
      Math.floor(killedAt / 1000),
      Math.ceil(record.finishedAt / 1000),
    );
    expect(
      series.map((s) => s.metric.instance),
      `${tail}\n${text}`,
    ).toEqual([`127.0.0.1:${port}`]);
    const fired = series.flatMap(spansOf);
    // In order, never timed: each span began after the kill and ended before the run did.
    for (const span of fired) {
      expect(span.firstFiringMs).toBeGreaterThan(killedAt);
      expect(span.lastFiringMs).toBeLessThan(record.finishedAt);
    }
    const now = await queryRange(
      stack.prometheusUrl,
      'ALERTS{alertname="ConsumerDown",alertstate="firing"}',
      Math.floor(Date.now() / 1000),
      Math.floor(Date.now() / 1000),
    );
    expect(now).toEqual([]);

    // The record agrees: promised, kept, and nothing lost or doubled around it.
    expect(drill!.promisedAlerts).toEqual(['ConsumerDown']);
    expect(drill!.alerts).toContain('ConsumerDown');
    expect(drill!.verdict.ok, drill!.verdict.detail).toBe(true);
    expect(drill!.verdict.detail).toContain('raised and resolved the alerts it promises (ConsumerDown)');
    const outcome = await independentOutcome(show, sources, from);
    expect(outcome.problems, tail).toEqual([]);
  }, 600_000);
});
