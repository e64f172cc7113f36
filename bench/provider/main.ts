/**
 * The email provider as a process of its own (`npm run smtp-provider`), so that its work is not
 * counted in the consumer's CPU: the SMTP server (./provider.ts) and its control API
 * (./control-api.ts), both on 127.0.0.1. Once both listen it prints one JSON line to stdout,
 * `{"smtpPort":n,"httpPort":n}`, and nothing else there: its logs go to stderr. The first
 * SIGINT/SIGTERM answers the messages waiting for their delay and closes everything; a second
 * one exits at once.
 */
import { badArgument, startProgram } from '../../lib/cli.js';
import { errorMessage } from '../../lib/errors.js';
import { Releasers, onShutdownSignals } from '../../lib/shutdown.js';
import { serveControlApi } from './control-api.js';
import { startProvider } from './provider.js';
import { providerSettings, type ProviderConfig } from './settings.js';
import type { Logger } from '../../lib/logger.js';

const USAGE = `Usage: npm run smtp-provider [-- --help | --env-example]

An SMTP server on 127.0.0.1 that behaves like an email provider: each message is accepted
SMTP_PROVIDER_ACCEPT_DELAY_MS after its DATA ends, connections past SMTP_PROVIDER_MAX_CONNECTIONS
are refused with 421, and with a throttle rate set, messages over it are refused with 451.
Prints {"smtpPort":n,"httpPort":n} on stdout once listening; logs go to stderr. The control API:
GET /stats, GET /message-ids, POST /throttle {"ratePerSecond":n} or {"off":true},
POST /delay {"acceptDelayMs":n}, POST /reset (docs/performance.md, "The email provider").`;

/** Runs `start`; a failure to listen names the setting that chose the port. */
async function listening<T>(setting: string, port: number, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    throw new Error(`cannot listen on 127.0.0.1:${port} (${errorMessage(err)}); set ${setting} to a free port or 0`, {
      cause: err,
    });
  }
}

async function runProvider(config: ProviderConfig, logger: Logger, releasers: Releasers): Promise<void> {
  const { settings } = providerSettings;
  const provider = await listening(settings.smtpPort.env, config.smtpPort, () =>
    startProvider({
      port: config.smtpPort,
      acceptDelayMs: config.acceptDelayMs,
      maxConnections: config.maxConnections,
      ratePerSecond: config.throttleRate === 0 ? undefined : config.throttleRate,
    }),
  );
  releasers.add('smtp server', () => provider.close());
  const api = await listening(settings.httpPort.env, config.httpPort, () => serveControlApi(provider, config.httpPort));
  releasers.add('control api', () => api.close());
  process.stdout.write(`${JSON.stringify({ smtpPort: provider.port, httpPort: api.port })}\n`);
  logger.info({ smtpPort: provider.port, httpPort: api.port, config }, 'smtp provider listening');
}

startProgram({
  settings: providerSettings,
  usage: USAGE,
  logLevel: (config) => config.logLevel,
  logDestination: process.stderr,
  main: async (config, args, logger) => {
    if (args.length > 0) throw badArgument(`unknown argument ${args[0]}; see npm run smtp-provider -- --help`);
    const releasers = new Releasers(logger);
    const release = async () => {
      if ((await releasers.releaseAll()).length > 0) process.exitCode = 1;
    };
    onShutdownSignals({ logger, graceful: release, pending: () => releasers.current });
    try {
      await runProvider(config, logger, releasers);
    } catch (err) {
      await release();
      throw err;
    }
    return 'running';
  },
});
