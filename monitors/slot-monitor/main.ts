/**
 * The slot monitor's command line: `npm run slot-monitor` (settings from the environment),
 * `--help` for the settings, `--env-example` for a documented .env file.
 */
import { startMonitorProgram } from '../alerting/monitor-program.js';
import { parseSlotMonitorConfig, slotMonitorSettings } from './settings.js';
import { startSlotMonitor } from './slot-monitor.js';

const USAGE = `Usage: npm run slot-monitor [-- --help | --env-example]

Watches the replication slots of the seat database (pg_replication_slots), keeps
max_slot_wal_keep_size at its target, and alerts through Alertmanager, a webhook and the log.
Metrics on http://<SLOT_MONITOR_METRICS_HOST>:<SLOT_MONITOR_METRICS_PORT>/metrics.
Stops gracefully on SIGINT/SIGTERM (a second signal forces it).

`;

startMonitorProgram({
  scrapeJob: 'slot-monitor',
  settings: slotMonitorSettings,
  usage: USAGE,
  what: 'slot monitor',
  parse: parseSlotMonitorConfig,
  logLevel: (config) => config.logLevel,
  start: startSlotMonitor,
});
