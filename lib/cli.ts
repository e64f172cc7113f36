/**
 * The frame every program shares: --help and --env-example from its settings table, bad
 * configuration reported as one sentence per setting (exit 2), a bad command-line argument (a
 * PipelineError coded BAD_ARGUMENT) as its sentence (exit 2), a failure as one message (exit 1).
 * A one-shot command returns its exit code; a long-running program returns 'running' and ends
 * on a signal (see lib/shutdown.ts).
 */
import { PipelineError, causeChain, errorMessage, isRetryableKafkaError, isRetryablePgError } from './errors.js';
import { createLogger, isLogLevel, type CreateLoggerOptions, type Logger, type LogLevel } from './logger.js';
import {
  ConfigError,
  envExample,
  parseSettings,
  settingsHelp,
  type Config,
  type SettingsDefinition,
  type SettingsTable,
} from './settings.js';

export interface ProgramOptions<T extends SettingsTable> {
  settings: SettingsDefinition<T>;
  /** Usage text printed before the settings for --help. */
  usage: string;
  main: (config: Config<T>, args: string[], logger: Logger) => Promise<number | 'running'>;
  /** Parses the environment; parseSettings unless the program checks settings against each other too. */
  parse?: (env: NodeJS.ProcessEnv) => Config<T>;
  /** The log level from the parsed settings; LOG_LEVEL (default info) otherwise. */
  logLevel?: (config: Config<T>) => LogLevel;
  /** Where the logs go; stdout when omitted. A program whose stdout is read by its parent logs to stderr. */
  logDestination?: CreateLoggerOptions['destination'];
  argv?: string[];
}

/** The code of a PipelineError about the command line: runProgram prints its message and exits 2. */
export const BAD_ARGUMENT = 'bad_argument';

/** A bad command-line argument: `message` names the argument and how to write it. */
export function badArgument(message: string): PipelineError {
  return new PipelineError(BAD_ARGUMENT, message);
}

function defaultLogLevel(): LogLevel {
  const level = process.env.LOG_LEVEL ?? 'info';
  return isLogLevel(level) ? level : 'info';
}

async function runProgram<T extends SettingsTable>(options: ProgramOptions<T>): Promise<number | 'running'> {
  const args = options.argv ?? process.argv.slice(2);
  const program = options.settings.program;
  if (args.includes('--help') || args.includes('-h')) {
    console.log(`${options.usage.trimEnd()}\n\nSettings (environment variables):\n${settingsHelp(options.settings)}`);
    return 0;
  }
  if (args.includes('--env-example')) {
    console.log(envExample(options.settings));
    return 0;
  }
  let logger: Logger | undefined;
  try {
    const config = (options.parse ?? ((env) => parseSettings(options.settings, env)))(process.env);
    logger = createLogger({
      name: program,
      level: options.logLevel?.(config) ?? defaultLogLevel(),
      destination: options.logDestination,
    });
    return await options.main(config, args, logger);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`${program}: bad configuration\n  ${err.problems.join('\n  ')}`);
      return 2;
    }
    if (err instanceof PipelineError && err.code === BAD_ARGUMENT) {
      console.error(`${program}: ${err.message}`);
      return 2;
    }
    const code = err instanceof PipelineError ? ` [${err.code}]` : '';
    console.error(`${program}${code}: ${errorMessage(err)}${unreachableHint(err)}`);
    logger?.debug({ err }, 'failure detail');
    return 1;
  }
}

/** For a failure to reach Kafka or Postgres that carries no advice of its own: what to do. */
function unreachableHint(err: unknown): string {
  if (err instanceof PipelineError) return '';
  const links = causeChain(err);
  if (links.some(isRetryableKafkaError))
    return ' (Kafka did not answer: start the stack with npm run stack -- start, or set KAFKA_BROKERS)';
  if (links.some(isRetryablePgError))
    return ' (Postgres did not answer: start the stack with npm run stack -- start, or fix the database URL)';
  return '';
}

/** Runs a program as the process's entry point: exits with a one-shot command's code. */
export function startProgram<T extends SettingsTable>(options: ProgramOptions<T>): void {
  runProgram(options).then(
    (code) => {
      if (code !== 'running') process.exit(code);
    },
    (err: unknown) => {
      console.error(errorMessage(err));
      process.exit(1);
    },
  );
}

/** The value following `--name` in args, or undefined. */
export function flagValue(args: string[], name: string): string | undefined {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : undefined;
}

/**
 * The value of `--name`: undefined when the flag is absent; a flag given without a value (the end
 * of the line, or the next flag) is a bad argument whose message shows `example`.
 */
export function flagArgument(args: string[], name: string, example: string): string | undefined {
  if (!args.includes(`--${name}`)) return undefined;
  const value = flagValue(args, name);
  if (value === undefined || value.startsWith('--'))
    throw badArgument(`--${name} needs a value, e.g. --${name} ${example}`);
  return value;
}
