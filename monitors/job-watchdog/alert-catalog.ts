/**
 * Every alert the job watchdog raises: severity and the runbook on-call follows. Summaries and
 * descriptions are written by job-conditions.ts with the numbers of the moment;
 * docs/operations.md explains each one at length (each alert's runbook_url links to its section).
 */
import type { AlertCatalog } from '../alerting/alert-tracker.js';

const SWEEPER_PROCESS_STEPS = [
  "Check the job's processes: systemctl status / kubectl get pods for the hold sweeper (npm run hold-sweeper), and their last log lines.",
  "Look at its latest runs on the seat database: select run_slot, claimed_by, started_at, finished_at, outcome, detail from job_runs where job_name = '<job_name>' order by run_slot desc limit 10;",
] as const;

export const JOB_ALERTS = {
  JobRunOverdue: {
    severity: 'critical',
    runbook: [
      'No process has claimed a run of the job for longer than its interval × tolerance: every sweeper is dead, stuck, or cannot reach the seat database. For the hold sweeper this means expired holds keep their seats and buyers cannot buy them.',
      ...SWEEPER_PROCESS_STEPS,
      'Start (or restart) one sweeper. Runs claim their slot with insert … on conflict do nothing, so starting a second one is safe.',
      'The alert resolves at the next watchdog poll after a run is claimed; OverdueHoldsPilingUp resolves once that run has expired the holds.',
    ],
  },
  JobRunPastDeadline: {
    severity: 'warning',
    runbook: [
      'A run was claimed but has not finished within its deadline: the process that claimed it (claimed_by) hangs, or died before stamping finished_at.',
      ...SWEEPER_PROCESS_STEPS,
      "If claimed_by is alive, look for a blocked query: select pid, state, wait_event, query from pg_stat_activity where application_name = 'hold-sweeper'; cancel it with select pg_cancel_backend(<pid>); if needed.",
      "If claimed_by is dead, later slots are claimed by the live sweepers; stamp the dead run so it stops alerting: update job_runs set finished_at = now(), outcome = 'failed', detail = '{\"error\":\"abandoned\"}' where job_name = '<job_name>' and run_slot = '<run_slot>';",
    ],
  },
  JobRunsFailing: {
    severity: 'warning',
    runbook: [
      'The latest runs of the job all failed. The job is alive but cannot do its work.',
      "Read the errors: select run_slot, claimed_by, detail->>'error' from job_runs where job_name = '<job_name>' and outcome = 'failed' order by run_slot desc limit 5; and the sweeper log (\"hold sweep failed\").",
      'Typical causes: the seat service role lost a grant, the schema registry is down (hold-expired events cannot be encoded), lock timeouts during a heavy on-sale.',
      'The alert resolves when a run succeeds.',
    ],
  },
  OverdueHoldsPilingUp: {
    severity: 'critical',
    runbook: [
      'Active holds are past their expiry by more than the grace time: their seats stay "held" and nobody can buy them. The sweeper is not running, not claiming, or failing.',
      'Check JobRunOverdue / JobRunsFailing for the hold sweeper and follow them first.',
      "Count and see them: select count(*), min(expires_at) from holds where status = 'active' and expires_at < now() - interval '2 minutes';",
      'To free the seats at once while the sweeper is being fixed: npm run seat-service -- expire --limit 500 (repeat until it reports 0); it writes the same hold-expired events.',
    ],
  },
  JobWatchdogDatabaseUnreachable: {
    severity: 'critical',
    runbook: [
      'The job watchdog cannot query the seat database, so nobody watches the scheduled jobs; alerts that were firing stay firing.',
      'Check the database is up (pg_isready -h <host> -p <port>) and accepts the watchdog role (its log names the refusal).',
      'If the database is down, that is the bigger incident; if only the watchdog is refused, fix its credentials, grants (ensureWatchdogRole) or pg_hba.conf.',
    ],
  },
  Watchdog: {
    severity: 'none',
    runbook: [
      "Always firing while the job watchdog runs, so that its silence is noticed. Route it to a dead man's switch that pages when it STOPS arriving.",
      'If it stopped: the job watchdog process is dead or cannot reach Alertmanager. Check the process and its log.',
    ],
  },
} as const satisfies AlertCatalog<string>;

export type JobAlertName = keyof typeof JOB_ALERTS;
