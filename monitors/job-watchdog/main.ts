/**
 * The job watchdog's command line: `npm run job-watchdog` (settings from the environment),
 * `--help` for the settings, `--env-example` for a documented .env file. It runs apart from the
 * jobs it watches (DESIGN.md decision 8): a sweeper that dies cannot take its watcher with it.
 */
import { startProgram } from '../../lib/cli.js';
import { configForLog } from '../../lib/settings.js';
import { onShutdownSignals } from '../../lib/shutdown.js';
import { jobWatchdogSettings, parseJobWatchdogConfig } from './settings.js';
import { startJobWatchdog } from './start-watchdog.js';

const USAGE = `Usage: npm run job-watchdog [-- --help | --env-example]

Watches the scheduled jobs in job_runs (the hold sweeper) and the overdue holds of the seat
database, and alerts through Alertmanager, a webhook and the log when a run is overdue, past its
deadline or failing, or when overdue holds pile up. Metrics on /metrics.
Stops gracefully on SIGINT/SIGTERM (a second signal forces it).

`;

startProgram({
  settings: jobWatchdogSettings,
  usage: USAGE,
  parse: parseJobWatchdogConfig,
  logLevel: (config) => config.logLevel,
  main: async (config, args, logger) => {
    if (args.length > 0) {
      process.stderr.write(`unknown argument ${args[0]}\n\n${USAGE}`);
      return 2;
    }
    logger.info({ config: configForLog(jobWatchdogSettings, config) }, 'starting the job watchdog');
    const running = await startJobWatchdog(config, logger);
    logger.info({ metrics: `${running.http.url}/metrics` }, 'job watchdog running');
    onShutdownSignals({ logger, graceful: () => running.stop() });
    return 'running';
  },
});
