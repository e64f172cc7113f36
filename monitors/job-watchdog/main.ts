/**
 * The job watchdog's command line: `npm run job-watchdog` (settings from the environment),
 * `--help` for the settings, `--env-example` for a documented .env file. It runs apart from the
 * jobs it watches (DESIGN.md decision 8): a sweeper that dies cannot take its watcher with it.
 */
import { createLogger } from '../../lib/logger.js';
import { ConfigError, configForLog, envExample, settingsHelp } from '../../lib/settings.js';
import { onShutdownSignals } from '../../lib/shutdown.js';
import { PROGRAM, jobWatchdogSettings, parseJobWatchdogConfig } from './settings.js';
import { startJobWatchdog } from './start-watchdog.js';

const USAGE = `Usage: npm run job-watchdog [-- --help | --env-example]

Watches the scheduled jobs in job_runs (the hold sweeper) and the overdue holds of the seat
database, and alerts through Alertmanager, a webhook and the log when a run is overdue, past its
deadline or failing, or when overdue holds pile up. Metrics on /metrics.
Stops gracefully on SIGINT/SIGTERM (a second signal forces it).

`;

/** Returns an exit code for one-shot commands, or undefined while the watchdog keeps running. */
async function main(argv: readonly string[]): Promise<number | undefined> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE + settingsHelp(jobWatchdogSettings));
    return 0;
  }
  if (argv.includes('--env-example')) {
    process.stdout.write(envExample(jobWatchdogSettings));
    return 0;
  }
  if (argv.length > 0) {
    process.stderr.write(`${PROGRAM}: unknown argument ${argv[0]}\n\n${USAGE}`);
    return 2;
  }
  const config = parseJobWatchdogConfig(process.env);
  const logger = createLogger({ name: PROGRAM, level: config.logLevel });
  logger.info({ config: configForLog(jobWatchdogSettings, config) }, 'starting the job watchdog');
  const running = await startJobWatchdog(config, logger);
  logger.info({ metrics: `${running.http.url}/metrics` }, 'job watchdog running');
  onShutdownSignals({ logger, graceful: () => running.stop() });
  return undefined;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`${PROGRAM}: cannot start, the configuration is invalid:\n${err.problems.map((p) => `  - ${p}`).join('\n')}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`${PROGRAM}: cannot start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
