/**
 * A polling monitor as a program, in the frame every long-running program shares
 * (lib/long-running-program.ts): its settings (with the monitor's own checks across settings), its
 * start line with alert destinations shown as their origin, and its running monitor released on the
 * first signal.
 */
import type { Logger, LogLevel } from '../../lib/logger.js';
import { startLongRunningProgram } from '../../lib/long-running-program.js';
import type { HttpEndpoint } from '../../lib/metrics.js';
import { configForLog, type Config, type SettingsDefinition, type SettingsTable } from '../../lib/settings.js';
import type { ScrapeJob } from '../../stack/scrape-targets.js';
import { urlOrigin } from './delivery-queue.js';

export interface MonitorProgram<T extends SettingsTable> {
  settings: SettingsDefinition<T>;
  usage: string;
  /** "slot monitor", "job watchdog": for the start and running log lines. */
  what: string;
  /** Its Prometheus job (the alert rules': slot-monitor, job-watchdog). */
  scrapeJob: ScrapeJob;
  parse: (env: NodeJS.ProcessEnv) => Config<T>;
  logLevel: (config: Config<T>) => LogLevel;
  start: (config: Config<T>, logger: Logger) => Promise<{ http: HttpEndpoint; stop(): Promise<void> }>;
}

/** Settings holding a destination URL, which may embed a token or a password: logged as their origin. */
const DESTINATION_URLS = ['alertmanagerUrl', 'webhookUrl'];

/** The configuration as logged at start: secrets as "[secret]", alert destinations as scheme://host:port only. */
function monitorConfigForLog<T extends SettingsTable>(
  settings: SettingsDefinition<T>,
  config: Config<T>,
): Record<string, unknown> {
  const shown = configForLog(settings, config);
  for (const key of DESTINATION_URLS) {
    const value = shown[key];
    if (typeof value === 'string' && value !== '') shown[key] = urlOrigin(value);
  }
  return shown;
}

export function startMonitorProgram<T extends SettingsTable>(program: MonitorProgram<T>): void {
  startLongRunningProgram({
    settings: program.settings,
    usage: program.usage,
    parse: program.parse,
    logLevel: program.logLevel,
    configForLog: (config) => monitorConfigForLog(program.settings, config),
    lines: { starting: `starting the ${program.what}`, running: `${program.what} running` },
    scrapeJob: program.scrapeJob,
    start: async (config, { logger, releasers }) => {
      const running = await program.start(config, logger);
      releasers.add(program.what, () => running.stop());
      return { http: running.http };
    },
  });
}
