/**
 * The alert catalogue as a whole: which alert goes into which rule file and which section of
 * docs/operations.md, and what each monitor raises in process.
 */
import type { AnyAlertSpec, InProcessSource, RuleFileSpec } from './alert-spec.js';
import { CONSUMER_ALERTS } from './consumer-alerts.js';
import { HEARTBEAT_ALERTS } from './heartbeat-alerts.js';
import { JOB_ALERTS } from './job-alerts.js';
import { SLOT_ALERTS } from './slot-alerts.js';

export { CONSUMER_ALERTS, JOB_ALERTS, SLOT_ALERTS };

const GENERATED = 'Generated from monitors/alerts/ by npm run -s alerts:render: edit the catalogue, not this file.';

export const RULE_FILES: readonly RuleFileSpec[] = [
  {
    file: 'slot-alerts.rules.yml',
    header: [
      "Prometheus alert rules for the slot monitor's metrics, for people who scrape it instead of",
      "(or as well as) receiving its alerts directly. Same names and meanings as the monitor's own",
      'alerts; what each means and what to do: docs/operations.md.',
      'Scrape job name assumed: slot-monitor. Tested with: promtool test rules slot-alerts.test.yml',
      GENERATED,
    ],
    alerts: { ...SLOT_ALERTS, ...HEARTBEAT_ALERTS },
  },
  {
    file: 'job-alerts.rules.yml',
    header: [
      "Prometheus alert rules for the job watchdog's and the hold sweeper's metrics. The watchdog",
      "rules have the same names and meanings as the watchdog's own alerts and compare against the",
      'thresholds it exports (job_watchdog_*_threshold, *_overdue_after_seconds), so the two never',
      'disagree. What each means and what to do: docs/operations.md.',
      'Scrape jobs assumed: job-watchdog, hold-sweeper. Tested with: promtool test rules job-alerts.test.yml',
      GENERATED,
    ],
    alerts: JOB_ALERTS,
  },
  {
    file: 'consumer-alerts.rules.yml',
    header: [
      "Prometheus alert rules for the consumers' metrics (consumers/runtime/metrics.ts): dead letters,",
      'partitions held by a failure or by a bug in the handler, events past their deadline, event age,',
      'lag, and a consumer that cannot be scraped. What each means and what to do: docs/operations.md.',
      'Scrape job assumed: consumers (one target per consumer process; the `consumer` label comes from',
      'the metrics). Tested with: promtool test rules consumer-alerts.test.yml',
      GENERATED,
    ],
    alerts: CONSUMER_ALERTS,
  },
];

/** A generated part of docs/operations.md: its marker name and its alerts, in order. */
export interface RunbookSection {
  marker: string;
  alerts: Readonly<Record<string, AnyAlertSpec>>;
}

export const RUNBOOK_SECTIONS: readonly RunbookSection[] = [
  { marker: 'slot-alerts', alerts: SLOT_ALERTS },
  { marker: 'job-alerts', alerts: JOB_ALERTS },
  { marker: 'consumer-alerts', alerts: CONSUMER_ALERTS },
  { marker: 'heartbeat-alerts', alerts: HEARTBEAT_ALERTS },
];

/** Every alert of the catalogue by name (a name is defined once: a test checks it). */
export const ALL_ALERTS: Readonly<Record<string, AnyAlertSpec>> = Object.assign(
  {},
  ...RUNBOOK_SECTIONS.map((section) => section.alerts),
) as Record<string, AnyAlertSpec>;

/** The alerts a monitor raises in process, by name (its heartbeat included). */
export function raisedBy(source: InProcessSource): string[] {
  return [
    ...Object.entries(ALL_ALERTS)
      .filter(([, spec]) => spec.raisedBy === source)
      .map(([name]) => name),
    'Watchdog',
  ];
}
