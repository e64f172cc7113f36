/** The redrive command line: the command, the dead letter topic and the selection, each bad argument one sentence. */
import { parseArgs } from 'node:util';
import { badArgument } from '../../lib/cli.js';

/** A whole number of at least 0 from `--flag`, or a bad argument naming it. */
function wholeNumber(flag: string, text: string | undefined): bigint | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,19}$/.test(text))
    throw badArgument(`--${flag} ${text} is not an offset or partition number (0 or more); e.g. --${flag} 0`);
  return BigInt(text);
}

function readArgs(args: string[]) {
  try {
    return parseArgs({
      args,
      allowPositionals: true,
      options: {
        consumer: { type: 'string', multiple: true },
        reason: { type: 'string', multiple: true },
        'ce-id': { type: 'string', multiple: true },
        partition: { type: 'string' },
        'from-offset': { type: 'string' },
        'to-offset': { type: 'string' },
        rate: { type: 'string', default: '50' },
        by: { type: 'string', default: process.env.USER ?? 'unknown' },
        again: { type: 'boolean', default: false },
        apply: { type: 'boolean', default: false },
      },
    });
  } catch (err) {
    throw badArgument(`${err instanceof Error ? err.message : String(err)}; see the usage with redrive --help`);
  }
}

/** The command read from `args`; undefined when there is no command or topic (the caller prints the usage). */
export function parseCommand(args: string[]) {
  const { values, positionals } = readArgs(args);
  const [command, topic] = positionals;
  if ((command !== 'list' && command !== 'redrive') || topic === undefined) return undefined;
  const rate = Number(values.rate);
  if (!Number.isFinite(rate) || rate <= 0)
    throw badArgument(`--rate ${values.rate} is not a positive number of records per second; e.g. --rate 50`);
  const partition = wholeNumber('partition', values.partition);
  const fromOffset = wholeNumber('from-offset', values['from-offset']);
  const toOffset = wholeNumber('to-offset', values['to-offset']);
  if (fromOffset !== undefined && toOffset !== undefined && fromOffset > toOffset)
    throw badArgument(`--from-offset ${fromOffset} is past --to-offset ${toOffset}: the range would select nothing`);
  const selection = {
    consumers: values.consumer ?? [],
    reasons: values.reason ?? [],
    ceIds: values['ce-id'] ?? [],
    ...(partition === undefined ? {} : { partition: Number(partition) }),
    ...(fromOffset === undefined ? {} : { fromOffset }),
    ...(toOffset === undefined ? {} : { toOffset }),
  };
  return { command, topic, selection, rate, by: values.by, again: values.again, apply: values.apply };
}
