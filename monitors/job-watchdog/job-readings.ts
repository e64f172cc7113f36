/**
 * What the watchdog reads from the seat database on each poll: per watched job its latest claim,
 * latest success, failures since then and the runs past their deadline; and the overdue holds.
 * Every query is an index lookup (job_runs primary key and job_runs_unfinished; holds_active_expiry),
 * so the seat database pays next to nothing. The ages are computed with the database's clock.
 */
import type { Queryable } from './watchdog-role.js';
import type { WatchedJob } from './settings.js';

interface RunPastDeadline {
  runSlot: Date;
  claimedBy: string;
  runningSeconds: number;
}

export interface JobReading {
  jobName: string;
  /** Null when the job never claimed a run. */
  secondsSinceLastClaim: number | null;
  lastClaimedBy: string | null;
  /** Unix time of the last run that succeeded; null when none did. */
  lastSuccessEpochSeconds: number | null;
  /** Failed runs since the last successful one. */
  consecutiveFailures: number;
  lastError: string | null;
  pastDeadline: RunPastDeadline[];
}

interface HoldsReading {
  overdue: number;
  /** How long the oldest overdue hold is past its expiry; null when none is overdue. */
  oldestOverdueSeconds: number | null;
}

export interface WatchdogReading {
  jobs: JobReading[];
  holds: HoldsReading;
}

type JobRow = Omit<JobReading, 'pastDeadline'>;

const JOBS_SQL = /* sql */ `
  select j.job_name as "jobName",
         extract(epoch from now() - last_claim.started_at)::float8 as "secondsSinceLastClaim",
         last_claim.claimed_by as "lastClaimedBy",
         extract(epoch from last_success.finished_at)::float8 as "lastSuccessEpochSeconds",
         (select count(*)::int from job_runs f
           where f.job_name = j.job_name and f.outcome = 'failed'
             and f.run_slot > coalesce(last_success.run_slot, '-infinity')) as "consecutiveFailures",
         (select f.detail ->> 'error' from job_runs f
           where f.job_name = j.job_name and f.outcome = 'failed'
           order by f.run_slot desc limit 1) as "lastError"
    from unnest($1::text[]) as j (job_name)
    left join lateral (select r.started_at, r.claimed_by from job_runs r
                        where r.job_name = j.job_name order by r.run_slot desc limit 1) last_claim on true
    left join lateral (select r.run_slot, r.finished_at from job_runs r
                        where r.job_name = j.job_name and r.outcome = 'succeeded'
                        order by r.run_slot desc limit 1) last_success on true`;

const PAST_DEADLINE_SQL = /* sql */ `
  select r.job_name as "jobName", r.run_slot as "runSlot", r.claimed_by as "claimedBy",
         extract(epoch from now() - r.started_at)::float8 as "runningSeconds"
    from unnest($1::text[], $2::float8[]) as j (job_name, deadline_seconds)
    join job_runs r on r.job_name = j.job_name and r.finished_at is null
   where r.started_at < now() - make_interval(secs => j.deadline_seconds)
   order by r.job_name, r.run_slot`;

const OVERDUE_HOLDS_SQL = /* sql */ `
  select count(*)::int as overdue,
         extract(epoch from now() - min(expires_at))::float8 as "oldestOverdueSeconds"
    from holds
   where status = 'active' and expires_at < now() - make_interval(secs => $1)`;

export async function readWatchdogState(
  db: Queryable,
  jobs: readonly WatchedJob[],
  overdueHoldGraceMs: number,
): Promise<WatchdogReading> {
  const names = jobs.map((job) => job.name);
  const jobRows = (await db.query(JOBS_SQL, [names])).rows as JobRow[];
  const late = (await db.query(PAST_DEADLINE_SQL, [names, jobs.map((job) => job.deadlineMs / 1000)]))
    .rows as (RunPastDeadline & { jobName: string })[];
  const holds = (await db.query(OVERDUE_HOLDS_SQL, [overdueHoldGraceMs / 1000])).rows[0] as HoldsReading;
  return {
    jobs: jobRows.map((row) => ({
      ...row,
      pastDeadline: late
        .filter((run) => run.jobName === row.jobName)
        .map(({ runSlot, claimedBy, runningSeconds }) => ({ runSlot, claimedBy, runningSeconds })),
    })),
    holds,
  };
}
