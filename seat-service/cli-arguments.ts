/** The seat service command line read and checked before anything is opened: each bad argument one sentence. */
import { badArgument, flagArgument } from '../lib/cli.js';
import { parseSections } from './sections.js';

const COMMANDS = ['setup', 'purge-outbox', 'create-show', 'hold', 'confirm', 'release', 'expire'] as const;
export type Command = (typeof COMMANDS)[number];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function commandOf(args: string[]): Command {
  const command = args[0];
  const known = COMMANDS.find((c) => c === command);
  if (known === undefined)
    throw badArgument(
      `${command === undefined ? 'no command given' : `unknown command "${command}"`}; one of ${COMMANDS.join(', ')} (see --help)`,
    );
  return known;
}

/** The flags a service command needs, read and checked before anything is opened. */
export function readFlags(command: Command, args: string[]) {
  const need = (name: string, example: string): string => {
    const value = flagArgument(args, name, example);
    if (value === undefined) throw badArgument(`${command} needs --${name}, e.g. --${name} ${example}; see --help`);
    return value;
  };
  const holdId = (): string => {
    const value = need('hold', '6f1c0c1e-2b1a-4c57-9a57-0e6b1d1f2a3b');
    if (!UUID.test(value)) throw badArgument(`--hold ${value} is not a hold id: give the UUID that hold printed`);
    return value;
  };
  switch (command) {
    case 'create-show': {
      const showId = need('show', 'S1');
      return {
        command,
        showId,
        title: flagArgument(args, 'title', 'Night') ?? showId,
        sections: sectionsOf(need('sections', 'A:20x30:4500')),
      };
    }
    case 'hold':
      return {
        command,
        showId: need('show', 'S1'),
        seatIds: need('seats', 'S1:A-1-1,S1:A-1-2').split(','),
        buyerId: need('buyer', 'B1'),
      };
    case 'confirm':
      return { command, holdId: holdId(), buyerEmail: need('email', 'buyer@example.com') };
    case 'release':
      return { command, holdId: holdId() };
    case 'expire': {
      const limit = flagArgument(args, 'limit', '500') ?? '500';
      if (!/^[1-9]\d{0,5}$/.test(limit))
        throw badArgument(`--limit ${limit} is not a number of holds from 1 to 999999; e.g. --limit 500`);
      return { command, limit: Number(limit) };
    }
    default:
      throw badArgument(`${command} takes no service flags`);
  }
}

function sectionsOf(text: string) {
  try {
    return parseSections(text);
  } catch (err) {
    throw badArgument(`--sections: ${err instanceof Error ? err.message : String(err)}`);
  }
}

export type ServiceFlags = ReturnType<typeof readFlags>;
