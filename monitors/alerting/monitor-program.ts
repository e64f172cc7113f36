/**
 * The command line every long-running monitor shares: settings (with the monitor's own checks
 * across settings), --help / --env-example from lib/cli, a start, and graceful shutdown on signals.
 */
import { startProgram } from '../../lib/cli.js';
import type { Logger, LogLevel } from '../../lib/logger.js';
import { configForLog, type Config, type SettingsDefinition, type SettingsTable } from '../../lib/settings.js';
import { onShutdownSignals } from '../../lib/shutdown.js';
import { urlOrigin } from './delivery-queue.js';

export interface MonitorProgram<T extends SettingsTable> {
  settings: SettingsDefinition<T>;
  usage: string;
  /** "slot monitor", "job watchdog": for the start and running log lines. */
  what: string;
  parse: (env: NodeJS.ProcessEnv) => Config<T>;
  logLevel: (config: Config<T>) => LogLevel;
  start: (config: Config<T>, logger: Logger) => Promise<{ http: { url: string }; stop(): Promise<void> }>;
}

/** Settings holding a destination URL, which may embed a token or a password: logged as their origin. */
const DESTINATION_URLS = ['alertmanagerUrl', 'webhookUrl'];

/** The configuration as logged at start: secrets as "[secret]", alert destinations as scheme://host:port only. */
export function monitorConfigForLog<T extends SettingsTable>(
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
  startProgram({
    settings: program.settings,
    usage: program.usage,
    parse: program.parse,
    logLevel: program.logLevel,
    main: async (config, args, logger) => {
      if (args.length > 0) {
        process.stderr.write(`unknown argument ${args[0]}\n\n${program.usage}`);
        return 2;
      }
      logger.info({ config: monitorConfigForLog(program.settings, config) }, `starting the ${program.what}`);
      const running = await program.start(config, logger);
      logger.info({ metrics: `${running.http.url}/metrics` }, `${program.what} running`);
      onShutdownSignals({ logger, graceful: () => running.stop() });
      return 'running';
    },
  });
}
