/**
 * The job watchdog's command line: `npm run job-watchdog` (settings from the environment),
 * `--help` for the settings, `--env-example` for a documented .env file. It runs apart from the
 * jobs it watches (docs/design-decisions.md, "Scheduled work has a deadline, written down"): a
 * sweeper that dies cannot take its watcher with it.
 */
import { startMonitorProgram } from '../alerting/monitor-program.js';
import { jobWatchdogSettings, parseJobWatchdogConfig } from './settings.js';
import { startJobWatchdog } from './start-watchdog.js';

const USAGE = `Usage: npm run job-watchdog [-- --help | --env-example]

Watches the scheduled jobs in job_runs (the hold sweeper) and the overdue holds of the seat
database, and alerts through Alertmanager, a webhook and the log when a run is overdue, past its
deadline or failing, or when overdue holds pile up. Metrics on /metrics.
Stops gracefully on SIGINT/SIGTERM (a second signal forces it).

`;

startMonitorProgram({
  scrapeJob: 'job-watchdog',
  settings: jobWatchdogSettings,
  usage: USAGE,
  what: 'job watchdog',
  parse: parseJobWatchdogConfig,
  logLevel: (config) => config.logLevel,
  start: startJobWatchdog,
});
