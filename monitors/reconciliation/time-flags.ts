/** Reading points in time from the command line: --from, --to, --since. */
import { PipelineError } from '../../lib/errors.js';
import { BAD_ARGUMENT, flagValue } from '../../lib/cli.js';

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** An ISO 8601 time with its offset (2026-11-29T10:00:00Z), or a sentence saying what is wrong. */
export function parseTime(text: string, flag: string): Date {
  const time = new Date(text);
  if (!ISO_TIME.test(text) || Number.isNaN(time.getTime())) {
    throw new PipelineError(
      'bad_argument',
      `--${flag} ${text} is not an ISO 8601 time with an offset; write e.g. --${flag} 2026-11-29T10:00:00Z`,
    );
  }
  return time;
}

/** The time after `--name`, undefined when the flag is absent; a flag without a value is refused. */
function timeFlag(args: string[], name: string): Date | undefined {
  if (!args.includes(`--${name}`)) return undefined;
  const value = flagValue(args, name);
  if (value === undefined || value.startsWith('--'))
    throw new PipelineError('bad_argument', `--${name} needs a value, e.g. --${name} 2026-11-29T10:00:00Z`);
  return parseTime(value, name);
}

/** Runs `read`; a bad argument is printed as one sentence and gives undefined (the caller exits 2). */
export function readArguments<T>(program: string, read: () => T): T | undefined {
  try {
    return read();
  } catch (err) {
    if (!(err instanceof PipelineError) || err.code !== 'bad_argument') throw err;
    console.error(`${program}: ${err.message}`);
    return undefined;
  }
}

/** --from and --to, the only arguments: anything else (say --since) is refused, never ignored. */
export function readWindow(args: string[]): { from: Date | undefined; to: Date | undefined } {
  const flags = new Set(['--from', '--to']);
  const stray = args.find((arg, index) => !flags.has(arg) && !flags.has(args[index - 1] ?? ''));
  if (stray !== undefined)
    throw new PipelineError(
      BAD_ARGUMENT,
      `unknown argument ${stray}: the window is --from <ISO time> and --to <ISO time> (see --help)`,
    );
  const window = { from: timeFlag(args, 'from'), to: timeFlag(args, 'to') };
  if (window.from !== undefined && window.to !== undefined && window.from >= window.to)
    throw new PipelineError(
      BAD_ARGUMENT,
      `--from ${window.from.toISOString()} is not before --to ${window.to.toISOString()}: the window would be empty`,
    );
  return window;
}
