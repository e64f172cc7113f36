/**
 * Every scheduled-job alert: raised by the job watchdog in process (job-conditions.ts,
 * job-source.ts) and by Prometheus from the watchdog's and the sweepers' metrics (job-alerts.rules.yml,
 * generated from here). The watchdog rules compare its measurements with the thresholds it exports
 * (job_watchdog_*_threshold, *_overdue_after_seconds), so the two never disagree.
 */
import { alert } from './alert-spec.js';

const WATCHDOG = 'job-watchdog';
const SWEEPER = 'hold-sweeper';
const JOB = '{{ $labels.job_name }}';

export const JOB_ALERTS = {
  JobRunOverdue: alert<{ job: string; silent: string; every?: string }>({
    severity: 'critical',
    raisedBy: 'job-watchdog',
    summary: ({ job, silent, every }) =>
      `${job} has not claimed a run for ${silent}${every === undefined ? '' : ` (it should run every ${every})`}: no process is doing this job.`,
    rule: {
      group: WATCHDOG,
      expr: `job_watchdog_job_seconds_since_last_claim
  > on (job, instance, job_name)
job_watchdog_job_overdue_after_seconds`,
      summary: { job: JOB, silent: '{{ $value | humanizeDuration }}' },
    },
    meaning:
      'No process has claimed a run of `job_name` for more than interval × `JOB_WATCHDOG_OVERDUE_TOLERANCE` (3). For a job that has never run, the watchdog counts from its own start. For the hold sweeper this means every sweeper is dead, stuck, or cannot reach the database, so expired holds keep their seats.',
    steps: [
      'Check the sweeper processes (`systemctl status`, `kubectl get pods`) and their last log lines.',
      "`select run_slot, claimed_by, started_at, finished_at, outcome, detail from job_runs where job_name = 'hold-sweeper' order by run_slot desc limit 10;` shows the last claimant and when it ran.",
      'Start or restart a sweeper. Starting a second one is always safe, because runs are claimed with insert … on conflict do nothing.',
      'The alert resolves at the first watchdog poll after a run is claimed; [OverdueHoldsPilingUp](#overdueholdspilingup) resolves once that run has expired the holds.',
    ],
  }),
  JobRunPastDeadline: alert<{ runs: string; job: string; deadline?: string; claimant: string }>({
    severity: 'warning',
    raisedBy: 'job-watchdog',
    summary: ({ runs, job, deadline, claimant }) =>
      `${runs} of ${job} claimed but not finished within ${deadline === undefined ? 'the deadline' : `its ${deadline} deadline`}: ${claimant} hangs or died mid-run.`,
    rule: {
      group: WATCHDOG,
      expr: 'job_watchdog_job_runs_past_deadline > 0',
      summary: { runs: '{{ $value }} run(s)', job: JOB, claimant: 'the claiming process' },
    },
    meaning:
      "A run was claimed but has not finished within the job's deadline (the `:deadlineMs` part of `JOB_WATCHDOG_JOBS`). Either `claimed_by` hangs, or it died before stamping the run. Labels: `job_name`, `run_slot`.",
    steps: [
      "If `claimed_by` (host:pid) is alive, look for a blocked query: `select pid, state, wait_event, query from pg_stat_activity where application_name = 'hold-sweeper';`. If you need to, cancel it with `pg_cancel_backend(pid)`.",
      "If `claimed_by` is dead, the live sweepers claim the later slots. Stamp the dead run so the alert clears: `update job_runs set finished_at = now(), outcome = 'failed', detail = '{\"error\":\"abandoned\"}' where job_name = '…' and run_slot = '…';`",
    ],
  }),
  JobRunsFailing: alert<{ runs: string; job: string }>({
    severity: 'warning',
    raisedBy: 'job-watchdog',
    summary: ({ runs, job }) => `The last ${runs} runs of ${job} failed: the job runs but cannot do its work.`,
    rule: {
      group: WATCHDOG,
      expr: `job_watchdog_job_consecutive_failures
  >= on (job, instance) group_left ()
job_watchdog_failing_runs_threshold`,
      summary: { runs: '{{ $value }}', job: JOB },
    },
    meaning:
      '`JOB_WATCHDOG_FAILING_RUNS` (3) or more runs have failed since the last successful one. The job is alive but cannot do its work.',
    steps: [
      "Read the errors: `select run_slot, claimed_by, detail->>'error' from job_runs where job_name = '…' and outcome = 'failed' order by run_slot desc limit 5;` The sweeper log also has a \"hold sweep failed\" line with the stack trace.",
      'Typical causes are a lost grant, an unreachable schema registry (hold-expired events cannot be encoded), or lock timeouts under on-sale load.',
      'The alert resolves when a run succeeds.',
    ],
  }),
  OverdueHoldsPilingUp: alert<{ count: string; oldest?: string }>({
    severity: 'critical',
    raisedBy: 'job-watchdog',
    summary: ({ count, oldest }) =>
      `${count} holds are past their expiry and still hold their seats${oldest === undefined ? '' : ` (the oldest by ${oldest})`}: buyers cannot buy them.`,
    rule: {
      group: WATCHDOG,
      expr: `job_watchdog_overdue_holds
  >= on (job, instance)
job_watchdog_overdue_holds_alert_count`,
      summary: { count: '{{ $value }}' },
    },
    meaning:
      'At least `JOB_WATCHDOG_OVERDUE_HOLDS_ALERT_COUNT` (1) active holds are past `expires_at` by more than `JOB_WATCHDOG_OVERDUE_HOLD_GRACE_MS` (2 minutes). Their seats show as held and cannot be sold. A healthy sweeper keeps this at 0: it runs every 15 s, and holds being confirmed at that moment are only skipped until the next run.',
    steps: [
      'Follow [JobRunOverdue](#jobrunoverdue) or [JobRunsFailing](#jobrunsfailing) for the hold sweeper first. One of them is almost always firing too.',
      'To free the seats now, while the sweeper is being fixed, run `npm run seat-service -- expire --limit 500` until it reports 0. It writes the same hold-expired events.',
    ],
  }),
  JobWatchdogDatabaseUnreachable: alert<{ where?: string }>({
    severity: 'critical',
    raisedBy: 'job-watchdog',
    summary: ({ where }) =>
      `The job watchdog cannot read job_runs and holds on the seat database${where === undefined ? '' : ` ${where}`}: nobody watches the scheduled jobs.`,
    rule: { group: WATCHDOG, expr: 'job_watchdog_database_up == 0', for: '1m', summary: {} },
    meaning:
      'The watchdog cannot read `job_runs` and `holds`, so nobody is watching the jobs. Alerts that were firing stay firing.',
    steps: [
      '`pg_isready -h <host> -p <port>`. If the database is down, that is the bigger incident.',
      'If only the watchdog is refused, its log names the refusal. Fix its password, its grants (`ensureWatchdogRole`) or `pg_hba.conf`.',
    ],
  }),
  JobWatchdogDown: alert({
    severity: 'critical',
    summary: () => 'Prometheus cannot scrape the job watchdog: nobody is watching the hold sweeper.',
    rule: {
      group: WATCHDOG,
      expr: 'up{job="job-watchdog"} == 0 or absent(up{job="job-watchdog"})',
      for: '2m',
      summary: {},
    },
    meaning:
      'Prometheus cannot scrape the job watchdog, or no such scrape job exists. Nobody is watching the hold sweeper.',
    steps: [
      'Check the watchdog process and its log.',
      'If it runs, check Prometheus reaches its `/metrics` (`JOB_WATCHDOG_METRICS_PORT`, 9189 by default).',
    ],
  }),
  HoldSweeperDown: alert({
    severity: 'critical',
    summary: () => 'No hold sweeper answers its metrics scrape: due holds are not being expired.',
    rule: {
      group: SWEEPER,
      comment: ['Independent of the watchdog: Prometheus sees the sweepers themselves.'],
      expr: 'sum(up{job="hold-sweeper"}) == 0 or absent(up{job="hold-sweeper"})',
      for: '2m',
      summary: {},
    },
    meaning:
      'No hold sweeper answers its scrape (`sum(up{job="hold-sweeper"}) == 0`, or no such job). One sweeper down out of two does not fire. Prometheus sees this without the watchdog\'s help, so a dead watchdog does not hide a dead sweeper.',
    steps: ['Start a sweeper.', 'Follow [JobRunOverdue](#jobrunoverdue).'],
  }),
  HoldSweeperNoRecentSuccess: alert({
    severity: 'warning',
    summary: () => 'No hold sweeper has finished a run successfully for {{ $value | humanizeDuration }}.',
    rule: {
      group: SWEEPER,
      comment: [
        "The age of the last success as of the scrape that reported it (the sample's own timestamp,",
        'timestamp() of the selector, not time()): a sample is up to a scrape interval old when a rule',
        'reads it, so time() - success would add the scrape interval (15 s) to a sweeper interval of a',
        'second or two and fire while the sweeper works. A sweeper whose scrapes stop is HoldSweeperDown.',
        'Of several sweepers one claims each run slot, so the freshest success of any counts.',
      ],
      expr: `min(
  (timestamp(hold_sweeper_last_success_timestamp_seconds) - hold_sweeper_last_success_timestamp_seconds)
    and hold_sweeper_last_success_timestamp_seconds > 0
)
  > 3 * max(hold_sweeper_interval_seconds)`,
      for: '1m',
      summary: {},
    },
    meaning:
      "No sweeper has finished a run successfully for more than 3 intervals, as of the scrape that reported it (the freshest success across all sweepers counts; measured at the sample's own time, so a short sweeper interval under a 15 s scrape interval does not fire it). A sweeper that never succeeded does not fire on its own.",
    steps: ['Read the sweeper log.', 'Follow [JobRunsFailing](#jobrunsfailing).'],
  }),
} as const;
