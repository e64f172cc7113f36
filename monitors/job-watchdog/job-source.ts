/**
 * What the job watchdog reads on each poll: job_runs and the overdue holds, turned into the
 * conditions that hold now. The loop around it (alert starts and ends, re-sending, the heartbeat)
 * is monitors/alerting/poll-loop.ts.
 */
import { errorMessage } from '../../lib/errors.js';
import type { AlertCandidate } from '../alerting/alert-tracker.js';
import type { ConditionSource } from '../alerting/poll-loop.js';
import type { JobAlertName } from './alert-catalog.js';
import { jobAlertCandidates, type JobRules } from './job-conditions.js';
import { readWatchdogState } from './job-readings.js';
import type { JobWatchdogMetrics } from './metrics.js';
import type { Queryable } from './watchdog-role.js';
import { JOB_ALERTS } from '../alerts/job-alerts.js';

type Candidate = AlertCandidate<JobAlertName>;

export interface JobConditionSourceOptions {
  db: Queryable;
  /** `host:port/database`, named in the unreachable alert. */
  databaseLabel: string;
  rules: JobRules;
  metrics: JobWatchdogMetrics;
}

export class JobConditionSource implements ConditionSource<JobAlertName> {
  readonly #options: JobConditionSourceOptions;
  /** A job that never ran counts as silent since the watchdog started. */
  readonly #startedAt = Date.now();

  constructor(options: JobConditionSourceOptions) {
    this.#options = options;
  }

  async readConditions(now: Date): Promise<Candidate[]> {
    const { db, rules, metrics } = this.#options;
    const reading = await readWatchdogState(db, rules.jobs, rules.overdueHoldGraceMs);
    const watchingForSeconds = (now.getTime() - this.#startedAt) / 1000;
    metrics.recordReading(reading, watchingForSeconds);
    return jobAlertCandidates(reading, rules, watchingForSeconds);
  }

  unreachableAlert(err: unknown): Candidate {
    const where = this.#options.databaseLabel;
    return {
      name: 'JobWatchdogDatabaseUnreachable',
      labels: {},
      summary: JOB_ALERTS.JobWatchdogDatabaseUnreachable.summary({ where }),
      description: `Reading job_runs and holds on ${where} failed: ${errorMessage(err)}`,
    };
  }
}
