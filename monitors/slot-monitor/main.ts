/**
 * The slot monitor's command line: `npm run slot-monitor` (settings from the environment),
 * `--help` for the settings, `--env-example` for a documented .env file.
 */
import { createLogger } from '../../lib/logger.js';
import { ConfigError, configForLog, envExample, settingsHelp } from '../../lib/settings.js';
import { onShutdownSignals } from '../../lib/shutdown.js';
import { PROGRAM, parseSlotMonitorConfig, slotMonitorSettings } from './settings.js';
import { startSlotMonitor } from './slot-monitor.js';

const USAGE = `Usage: npm run slot-monitor [-- --help | --env-example]

Watches the replication slots of the seat database (pg_replication_slots), keeps
max_slot_wal_keep_size at its target, and alerts through Alertmanager, a webhook and the log.
Metrics on http://<SLOT_MONITOR_METRICS_HOST>:<SLOT_MONITOR_METRICS_PORT>/metrics.
Stops gracefully on SIGINT/SIGTERM (a second signal forces it).

`;

/** Returns an exit code for one-shot commands, or undefined while the monitor keeps running. */
async function main(argv: readonly string[]): Promise<number | undefined> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE + settingsHelp(slotMonitorSettings));
    return 0;
  }
  if (argv.includes('--env-example')) {
    process.stdout.write(envExample(slotMonitorSettings));
    return 0;
  }
  if (argv.length > 0) {
    process.stderr.write(`${PROGRAM}: unknown argument ${argv[0]}\n\n${USAGE}`);
    return 2;
  }
  const config = parseSlotMonitorConfig(process.env);
  const logger = createLogger({ name: PROGRAM, level: config.logLevel });
  logger.info({ config: configForLog(slotMonitorSettings, config) }, 'starting the slot monitor');
  const running = await startSlotMonitor(config, logger);
  logger.info({ metrics: `${running.http.url}/metrics` }, 'slot monitor running');
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
