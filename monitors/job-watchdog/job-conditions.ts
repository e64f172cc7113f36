/**
 * Turns one reading of job_runs and holds into the conditions that hold now (alert candidates).
 * Pure: no I/O, so every rule is visible in one place.
 */
import type { AlertCandidate } from '../alerting/alert-tracker.js';
import type { JobAlertName } from './alert-catalog.js';
import type { JobReading, WatchdogReading } from './job-readings.js';
import type { WatchedJob } from './settings.js';
import { JOB_ALERTS } from '../alerts/job-alerts.js';

type Candidate = AlertCandidate<JobAlertName>;

export interface JobRules {
  jobs: readonly WatchedJob[];
  overdueTolerance: number;
  failingRuns: number;
  overdueHoldGraceMs: number;
  overdueHoldsAlertCount: number;
}

const seconds = (value: number): string => `${value < 10 ? Math.round(value * 10) / 10 : Math.round(value)} s`;

/** Seconds without a claimed run after which the job is overdue. */
export function overdueAfterSeconds(job: WatchedJob, rules: Pick<JobRules, 'overdueTolerance'>): number {
  return (job.intervalMs / 1000) * rules.overdueTolerance;
}

/**
 * Seconds since the job last claimed a run; for a job that never ran, since the watchdog started
 * watching (it cannot know more, and a job that never runs is the worst case of overdue).
 */
export function silentForSeconds(reading: JobReading, watchingForSeconds: number): number {
  return reading.secondsSinceLastClaim ?? watchingForSeconds;
}

function overdue(job: WatchedJob, reading: JobReading, rules: JobRules, watchingForSeconds: number): Candidate[] {
  const silent = silentForSeconds(reading, watchingForSeconds);
  const limit = overdueAfterSeconds(job, rules);
  if (silent <= limit) return [];
  const last =
    reading.secondsSinceLastClaim === null
      ? 'has never claimed a run'
      : `last claimed a run ${seconds(silent)} ago (by ${reading.lastClaimedBy ?? '?'})`;
  return [
    {
      name: 'JobRunOverdue',
      labels: { job_name: job.name },
      summary: JOB_ALERTS.JobRunOverdue.summary({
        job: job.name,
        silent: seconds(silent),
        every: seconds(job.intervalMs / 1000),
      }),
      description: `${job.name} ${last}; overdue after ${seconds(limit)} (interval × ${rules.overdueTolerance}).`,
    },
  ];
}

function pastDeadline(job: WatchedJob, reading: JobReading): Candidate[] {
  return reading.pastDeadline.map((run) => ({
    name: 'JobRunPastDeadline',
    labels: { job_name: job.name, run_slot: run.runSlot.toISOString() },
    summary: JOB_ALERTS.JobRunPastDeadline.summary({
      runs: 'A run',
      job: job.name,
      deadline: seconds(job.deadlineMs / 1000),
      claimant: run.claimedBy,
    }),
    description: `job_runs row ${job.name} / ${run.runSlot.toISOString()} claimed by ${run.claimedBy} has no finished_at after ${seconds(run.runningSeconds)}.`,
  }));
}

function failing(job: WatchedJob, reading: JobReading, rules: JobRules): Candidate[] {
  if (reading.consecutiveFailures < rules.failingRuns) return [];
  return [
    {
      name: 'JobRunsFailing',
      labels: { job_name: job.name },
      summary: JOB_ALERTS.JobRunsFailing.summary({ runs: String(reading.consecutiveFailures), job: job.name }),
      description: `Failed runs since the last success: ${reading.consecutiveFailures} (alert at ${rules.failingRuns}). Latest error: ${reading.lastError ?? 'not recorded'}.`,
    },
  ];
}

function overdueHolds(reading: WatchdogReading, rules: JobRules): Candidate[] {
  const { overdue: count, oldestOverdueSeconds } = reading.holds;
  if (count < rules.overdueHoldsAlertCount) return [];
  return [
    {
      name: 'OverdueHoldsPilingUp',
      labels: {},
      summary: JOB_ALERTS.OverdueHoldsPilingUp.summary({
        count: String(count),
        oldest: seconds(oldestOverdueSeconds ?? 0),
      }),
      description: `Active holds with expires_at older than ${seconds(rules.overdueHoldGraceMs / 1000)}: ${count} (alert at ${rules.overdueHoldsAlertCount}).`,
    },
  ];
}

export function jobAlertCandidates(reading: WatchdogReading, rules: JobRules, watchingForSeconds: number): Candidate[] {
  const candidates: Candidate[] = [];
  for (const job of rules.jobs) {
    const jobReading = reading.jobs.find((row) => row.jobName === job.name);
    if (!jobReading) continue;
    candidates.push(
      ...overdue(job, jobReading, rules, watchingForSeconds),
      ...pastDeadline(job, jobReading),
      ...failing(job, jobReading, rules),
    );
  }
  return [...candidates, ...overdueHolds(reading, rules)];
}
