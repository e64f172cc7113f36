/**
 * The frame every command-line program shares: --help from the settings table, --env-example,
 * bad configuration reported as one sentence per setting (exit 2), failures as one message (exit 1).
 */
import { PipelineError, errorMessage } from './errors.js';
import { createLogger, isLogLevel, type Logger } from './logger.js';
import { ConfigError, envExample, parseSettings, settingsHelp, type Config, type SettingsDefinition, type SettingsTable } from './settings.js';

export interface ProgramOptions<T extends SettingsTable> {
  settings: SettingsDefinition<T>;
  /** Usage text printed before the settings for --help. */
  usage: string;
  main: (config: Config<T>, args: string[], logger: Logger) => Promise<number>;
  argv?: string[];
}

export async function runProgram<T extends SettingsTable>(options: ProgramOptions<T>): Promise<number> {
  const args = options.argv ?? process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(`${options.usage.trimEnd()}\n\nSettings (environment variables):\n${settingsHelp(options.settings)}`);
    return 0;
  }
  if (args.includes('--env-example')) {
    console.log(envExample(options.settings));
    return 0;
  }
  const level = process.env.LOG_LEVEL ?? 'info';
  const logger = createLogger({ name: options.settings.program, level: isLogLevel(level) ? level : 'info' });
  try {
    const config = parseSettings(options.settings, process.env);
    return await options.main(config, args, logger);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`${options.settings.program}: bad configuration\n  ${err.problems.join('\n  ')}`);
      return 2;
    }
    const code = err instanceof PipelineError ? ` [${err.code}]` : '';
    console.error(`${options.settings.program}${code}: ${errorMessage(err)}`);
    logger.debug({ err }, 'failure detail');
    return 1;
  }
}

/** Runs a program as the process's entry point and exits with its code. */
export function startProgram<T extends SettingsTable>(options: ProgramOptions<T>): void {
  runProgram(options).then(
    (code) => process.exit(code),
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
