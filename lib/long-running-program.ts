/**
 * The frame of every long-running program (the consumers, the slot monitor, the job watchdog, the
 * hold sweeper): settings parsed with readable errors, --help and --env-example (lib/cli.ts; exit
 * 2 on bad configuration or an unknown argument), the logger, the start of the program's parts with
 * each cleanup registered as it is opened, the /metrics, /healthz and /readyz server, and a
 * graceful shutdown on the first SIGINT/SIGTERM (forced on the second, lib/shutdown.ts) that
 * releases the parts in reverse order. A start that fails is logged, releases what it opened and
 * exits 1.
 */
import type { Registry } from 'prom-client';
import { startProgram } from './cli.js';
import { errorMessage } from './errors.js';
import type { Logger, LogLevel } from './logger.js';
import { serveHttp, type Check, type HttpEndpoint } from './metrics.js';
import { ConfigError, configForLog, type Config, type SettingsDefinition, type SettingsTable } from './settings.js';
import { Releasers, onShutdownSignals } from './shutdown.js';
import { announceScrapeTarget, type ScrapeJob } from '../stack/scrape-targets.js';

export interface ProgramParts {
  logger: Logger;
  /** Register each cleanup right after opening what it releases. */
  releasers: Releasers;
}

export interface StartedProgram {
  /** The program's /metrics, /healthz and /readyz server (serveProgramEndpoint). */
  http: HttpEndpoint;
  /** Fields of the running log line besides `metrics` (topics, group, …). */
  logFields?: Record<string, unknown>;
  /**
   * Settles when the program's work has ended by itself (the sweeper's loop, once a signal aborted
   * it): the frame then releases everything and exits 0. Without it the program runs until a signal.
   */
  finished?: Promise<void>;
}

export interface LongRunningProgram<T extends SettingsTable> {
  settings: SettingsDefinition<T>;
  usage: string;
  /** Parses the environment; parseSettings unless the program checks settings against each other too. */
  parse?: (env: NodeJS.ProcessEnv) => Config<T>;
  logLevel?: (config: Config<T>) => LogLevel;
  /** The configuration as the starting line logs it; configForLog (secrets hidden) by default. */
  configForLog?: (config: Config<T>) => Record<string, unknown>;
  /** Log lines: "seat-availability starting", "seat-availability consuming", "hold sweeper stopped". */
  lines: { starting: string; running: string; stopped?: string };
  start: (config: Config<T>, parts: ProgramParts) => Promise<StartedProgram>;
  /**
   * The Prometheus job the alert rules know the program by: beside a local stack, its /metrics is
   * announced to the stack's Prometheus under it (stack/scrape-targets.ts) while it runs.
   */
  scrapeJob?: ScrapeJob;
  /** One-shot commands named by the first argument (`reset`), run instead of the program; the exit code is theirs. */
  commands?: Record<string, (config: Config<T>, args: string[], logger: Logger) => Promise<number>>;
}

export interface ProgramEndpointOptions {
  registry: Registry;
  port: number;
  host: string;
  /** Liveness, /healthz: false makes Kubernetes restart the program. */
  health?: Check;
  /** Readiness, /readyz: false takes it out of its Service and fails the compose health check. */
  ready?: Check;
}

/** Serves the program's /metrics, /healthz and /readyz and registers its close. */
export async function serveProgramEndpoint(
  releasers: Releasers,
  options: ProgramEndpointOptions,
): Promise<HttpEndpoint> {
  const http = await serveHttp(options);
  releasers.add('metrics endpoint', () => http.close());
  return http;
}

/** The running line's `metrics` field: where Prometheus scrapes (tests read the address from it). */
export function metricsAddress(http: Pick<HttpEndpoint, 'url'>): string {
  return `${http.url}/metrics`;
}

async function runUntilDone<T extends SettingsTable>(
  program: LongRunningProgram<T>,
  config: Config<T>,
  logger: Logger,
): Promise<number | 'running'> {
  const name = program.settings.program;
  const releasers = new Releasers(logger);
  const release = async (): Promise<number> => ((await releasers.releaseAll()).length > 0 ? 1 : 0);
  onShutdownSignals({
    logger,
    graceful: async () => {
      if ((await release()) !== 0) process.exitCode = 1;
    },
    pending: () => releasers.current,
  });
  let started: StartedProgram;
  try {
    started = await program.start(config, { logger, releasers });
  } catch (err) {
    // Bad configuration found while starting (an unreadable CA file) is reported as such: exit 2.
    if (err instanceof ConfigError) {
      await releasers.releaseAll();
      throw err;
    }
    logger.fatal({ err }, `${name} could not start`);
    console.error(`${name}: could not start: ${errorMessage(err)}`);
    await releasers.releaseAll();
    return 1;
  }
  if (program.scrapeJob !== undefined) {
    const announced = announceScrapeTarget({ job: program.scrapeJob, program: name, endpointUrl: started.http.url });
    if (announced !== undefined) releasers.add('scrape target', () => announced.withdraw());
  }
  logger.info({ metrics: metricsAddress(started.http), ...started.logFields }, program.lines.running);
  if (started.finished === undefined) return 'running';
  try {
    await started.finished;
  } finally {
    // Waits for a release a signal began; a cleanup that failed there set process.exitCode.
    if ((await release()) !== 0) process.exitCode = 1;
    if (program.lines.stopped !== undefined) logger.info(program.lines.stopped);
  }
  return process.exitCode === 1 ? 1 : 0;
}

/** Runs a long-running program as the process's entry point. */
export function startLongRunningProgram<T extends SettingsTable>(program: LongRunningProgram<T>): void {
  startProgram({
    settings: program.settings,
    usage: program.usage,
    parse: program.parse,
    logLevel: program.logLevel,
    main: async (config, args, logger) => {
      const command = args[0] === undefined ? undefined : program.commands?.[args[0]];
      if (command !== undefined) return command(config, args.slice(1), logger);
      if (args.length > 0) {
        process.stderr.write(`unknown argument ${args[0]}\n\n${program.usage}`);
        return 2;
      }
      const shown = (program.configForLog ?? ((c: Config<T>) => configForLog(program.settings, c)))(config);
      logger.info({ config: shown }, program.lines.starting);
      return runUntilDone(program, config, logger);
    },
  });
}
