/**
 * The slot monitor's command line: `npm run slot-monitor` (settings from the environment),
 * `--help` for the settings, `--env-example` for a documented .env file.
 */
import { startProgram } from '../../lib/cli.js';
import { configForLog } from '../../lib/settings.js';
import { onShutdownSignals } from '../../lib/shutdown.js';
import { parseSlotMonitorConfig, slotMonitorSettings } from './settings.js';
import { startSlotMonitor } from './slot-monitor.js';

const USAGE = `Usage: npm run slot-monitor [-- --help | --env-example]

Watches the replication slots of the seat database (pg_replication_slots), keeps
max_slot_wal_keep_size at its target, and alerts through Alertmanager, a webhook and the log.
Metrics on http://<SLOT_MONITOR_METRICS_HOST>:<SLOT_MONITOR_METRICS_PORT>/metrics.
Stops gracefully on SIGINT/SIGTERM (a second signal forces it).

`;

startProgram({
  settings: slotMonitorSettings,
  usage: USAGE,
  parse: parseSlotMonitorConfig,
  logLevel: (config) => config.logLevel,
  main: async (config, args, logger) => {
    if (args.length > 0) {
      process.stderr.write(`unknown argument ${args[0]}\n\n${USAGE}`);
      return 2;
    }
    logger.info({ config: configForLog(slotMonitorSettings, config) }, 'starting the slot monitor');
    const running = await startSlotMonitor(config, logger);
    logger.info({ metrics: `${running.http.url}/metrics` }, 'slot monitor running');
    onShutdownSignals({ logger, graceful: () => running.stop() });
    return 'running';
  },
});
