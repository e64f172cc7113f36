/**
 * The job watchdog's Prometheus metrics, on the program's own registry: those of every polling
 * monitor (PollMetrics: job_watchdog_database_up, _polls_total, _alerts_firing, …) and what it reads.
 * monitors/prometheus/job-alerts.rules.yml raises the watchdog's alerts from these; the thresholds
 * are exported too, so the rules follow the configuration instead of repeating it.
 */
import { Gauge, type Registry } from 'prom-client';
import { PollMetrics } from '../alerting/poll-metrics.js';
import { overdueAfterSeconds, silentForSeconds, type JobRules } from './job-conditions.js';
import type { WatchdogReading } from './job-readings.js';

export class JobWatchdogMetrics extends PollMetrics<'job_name'> {
  readonly #silentFor: Gauge<'job_name'>;
  readonly #lastSuccess: Gauge<'job_name'>;
  readonly #pastDeadline: Gauge<'job_name'>;
  readonly #failures: Gauge<'job_name'>;
  readonly #overdueHolds: Gauge;
  readonly #oldestOverdueHold: Gauge;

  constructor(registry: Registry, rules: JobRules) {
    super(registry, {
      prefix: 'job_watchdog',
      monitor: 'watchdog',
      reads: 'job_runs and holds',
      alertLabel: 'job_name',
    });
    const registers = [registry];
    const perJob = (name: string, help: string) =>
      new Gauge({ name, help, labelNames: ['job_name'] as const, registers });
    const single = (name: string, help: string) => new Gauge({ name, help, registers });
    this.#silentFor = perJob(
      'job_watchdog_job_seconds_since_last_claim',
      'Seconds since the job last claimed a run in job_runs (since the watchdog started, for a job that never ran).',
    );
    this.#lastSuccess = perJob(
      'job_watchdog_job_last_success_timestamp_seconds',
      "Unix time the job's last successful run finished (absent when none did).",
    );
    this.#pastDeadline = perJob(
      'job_watchdog_job_runs_past_deadline',
      "Claimed runs without finished_at older than the job's deadline.",
    );
    this.#failures = perJob(
      'job_watchdog_job_consecutive_failures',
      "Failed runs since the job's last successful one.",
    );
    this.#overdueHolds = single(
      'job_watchdog_overdue_holds',
      'Active holds whose expires_at is older than the grace time: seats nobody can buy.',
    );
    this.#oldestOverdueHold = single(
      'job_watchdog_oldest_overdue_hold_seconds',
      'Seconds the oldest active hold is past its expiry (0 when none is overdue).',
    );
    this.#recordThresholds(registry, rules);
  }

  #recordThresholds(registry: Registry, rules: JobRules): void {
    const registers = [registry];
    const overdueAfter = new Gauge({
      name: 'job_watchdog_job_overdue_after_seconds',
      help: 'A job that claimed no run for longer than this is overdue (interval × tolerance).',
      labelNames: ['job_name'] as const,
      registers,
    });
    const interval = new Gauge({
      name: 'job_watchdog_job_interval_seconds',
      help: "The job's configured run interval.",
      labelNames: ['job_name'] as const,
      registers,
    });
    for (const job of rules.jobs) {
      overdueAfter.set({ job_name: job.name }, overdueAfterSeconds(job, rules));
      interval.set({ job_name: job.name }, job.intervalMs / 1000);
    }
    new Gauge({
      name: 'job_watchdog_failing_runs_threshold',
      help: 'JobRunsFailing fires at this many failed runs since the last success.',
      registers,
    }).set(rules.failingRuns);
    new Gauge({
      name: 'job_watchdog_overdue_holds_alert_count',
      help: 'OverdueHoldsPilingUp fires at this many overdue holds.',
      registers,
    }).set(rules.overdueHoldsAlertCount);
  }

  recordReading(reading: WatchdogReading, watchingForSeconds: number): void {
    this.#lastSuccess.reset();
    for (const job of reading.jobs) {
      const labels = { job_name: job.jobName };
      this.#silentFor.set(labels, silentForSeconds(job, watchingForSeconds));
      if (job.lastSuccessEpochSeconds !== null) this.#lastSuccess.set(labels, job.lastSuccessEpochSeconds);
      this.#pastDeadline.set(labels, job.pastDeadline.length);
      this.#failures.set(labels, job.consecutiveFailures);
    }
    this.#overdueHolds.set(reading.holds.overdue);
    this.#oldestOverdueHold.set(reading.holds.oldestOverdueSeconds ?? 0);
  }
}
