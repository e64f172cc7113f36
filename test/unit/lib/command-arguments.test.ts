/**
 * The operational commands' arguments, read before anything is opened: each bad one refused with a
 * sentence naming the argument and how to write it (runProgram prints it and exits 2), each good one
 * read as meant. The seat service's, redrive's and reconcile's tables; the commands themselves, with
 * the state they change, run against the stack (test/seat-service/seat-service-cli.test.ts,
 * test/consumers/redrive-cli.test.ts, test/reconciliation/reconcile-cli.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../../consumers/redrive/arguments.js';
import { BAD_ARGUMENT } from '../../../lib/cli.js';
import { PipelineError } from '../../../lib/errors.js';
import { readWindow } from '../../../monitors/reconciliation/time-flags.js';
import { commandOf, readFlags } from '../../../seat-service/cli-arguments.js';

const HOLD = '6f1c0c1e-2b1a-4c57-9a57-0e6b1d1f2a3b';

function refusal(read: () => unknown): string {
  try {
    read();
  } catch (err) {
    if (err instanceof PipelineError && err.code === BAD_ARGUMENT) return err.message;
    throw err;
  }
  throw new Error('accepted');
}

const seatService = (args: string[]) => readFlags(commandOf(args), args);

describe('seat service arguments', () => {
  it.each([
    [[], /^no command given; one of setup, purge-outbox, create-show, hold, confirm, release, expire/],
    [['sell'], /^unknown command "sell"; one of setup/],
    [['hold', '--show', 'S1', '--seats', 'a'], /^hold needs --buyer, e\.g\. --buyer B1; see --help$/],
    [['hold', '--show', '--seats', 'a', '--buyer', 'b'], /^--show needs a value, e\.g\. --show S1$/],
    [['hold', '--show', 'S1', '--seats', 'a', '--buyer'], /^--buyer needs a value, e\.g\. --buyer B1$/],
    [['confirm', '--hold', 'h-1', '--email', 'e'], /^--hold h-1 is not a hold id: give the UUID that hold printed$/],
    [['confirm', '--hold', HOLD], /^confirm needs --email, e\.g\. --email buyer@example\.com/],
    [['release'], /^release needs --hold, e\.g\. --hold [0-9a-f-]{36}/],
    [['create-show', '--show', 'S', '--sections', 'A:3x4'], /^--sections: section "A:3x4" is not like A:20x30:4500/],
    [['expire', '--limit', 'all'], /^--limit all is not a number of holds from 1 to 999999; e\.g\. --limit 500$/],
    [['expire', '--limit', '0'], /^--limit 0 is not a number of holds/],
    [['expire', '--limit', '-5'], /^--limit -5 is not a number of holds/],
  ])('%j is refused: %s', (args, says) => {
    expect(refusal(() => seatService(args))).toMatch(says);
  });

  it.each([
    [['hold', '--show', 'S1', '--seats', 'a,b', '--buyer', 'B'], { showId: 'S1', seatIds: ['a', 'b'], buyerId: 'B' }],
    [['confirm', '--hold', HOLD, '--email', 'e@x'], { holdId: HOLD, buyerEmail: 'e@x' }],
    [['release', '--hold', HOLD.toUpperCase()], { holdId: HOLD.toUpperCase() }],
    [['expire'], { limit: 500 }],
    [['expire', '--limit', '20'], { limit: 20 }],
    [['create-show', '--show', 'S'], undefined],
  ])('%j is read as meant', (args, flags) => {
    if (flags === undefined) expect(refusal(() => seatService(args))).toMatch(/create-show needs --sections/);
    else expect(seatService(args)).toMatchObject(flags);
  });

  it('setup and purge-outbox are commands of their own (no service flags)', () => {
    expect(commandOf(['setup'])).toBe('setup');
    expect(commandOf(['purge-outbox'])).toBe('purge-outbox');
  });
});

describe('redrive arguments', () => {
  it.each([
    [['redrive', 'd', '--from-offset', 'first'], /^--from-offset first is not an offset or partition number/],
    [
      ['redrive', 'd', '--partition', '-1'],
      /^Option '--partition' argument is ambiguous.*; see the usage with redrive --help$/s,
    ],
    [['redrive', 'd', '--partition', 'p0'], /^--partition p0 is not an offset or partition number \(0 or more\)/],
    [['redrive', 'd', '--from-offset', '3', '--to-offset', '1'], /^--from-offset 3 is past --to-offset 1/],
    [['redrive', 'd', '--rate', '0'], /^--rate 0 is not a positive number of records per second; e\.g\. --rate 50$/],
    [['redrive', 'd', '--rate', 'fast'], /^--rate fast is not a positive number/],
    [['redrive', 'd', '--reasons', 'x'], /^Unknown option '--reasons'.*; see the usage with redrive --help$/],
  ])('%j is refused: %s', (args, says) => {
    expect(refusal(() => parseCommand(args))).toMatch(says);
  });

  it('no command or no topic: undefined (the usage is printed, exit 2)', () => {
    expect(parseCommand([])).toBeUndefined();
    expect(parseCommand(['redrive'])).toBeUndefined();
    expect(parseCommand(['replay', 'd'])).toBeUndefined();
  });

  it('every selector read as meant', () => {
    const args = ['redrive', 'd', '--reason', 'a', '--reason', 'b', '--ce-id', 'c', '--partition', '2'];
    expect(parseCommand([...args, '--from-offset', '3', '--to-offset', '3', '--apply', '--again'])).toMatchObject({
      command: 'redrive',
      topic: 'd',
      selection: { reasons: ['a', 'b'], ceIds: ['c'], partition: 2, fromOffset: 3n, toOffset: 3n },
      apply: true,
      again: true,
      rate: 50,
    });
    expect(parseCommand(['list', 'd'])).toMatchObject({ command: 'list', apply: false, selection: { reasons: [] } });
  });
});

describe('reconcile window', () => {
  it.each([
    [['--since', '2026-11-01T09:00:00Z'], /^unknown argument --since: the window is --from <ISO time> and --to/],
    [['--from', '2026-11-01T09:00:00Z', '--until', 'x'], /^unknown argument --until/],
    [['--from', '2026-11-01T09:00:00'], /^--from 2026-11-01T09:00:00 is not an ISO 8601 time with an offset/],
    [['--to'], /^--to needs a value, e\.g\. --to 2026-11-29T10:00:00Z$/],
    [
      ['--from', '2026-11-01T12:00:00Z', '--to', '2026-11-01T12:00:00Z'],
      /is not before --to .*: the window would be empty$/,
    ],
  ])('%j is refused: %s', (args, says) => {
    expect(refusal(() => readWindow(args))).toMatch(says);
  });

  it('--from and --to read as given; either may be left out', () => {
    expect(readWindow(['--to', '2026-11-01T12:00:00+01:00', '--from', '2026-11-01T09:00:00Z'])).toEqual({
      from: new Date('2026-11-01T09:00:00Z'),
      to: new Date('2026-11-01T11:00:00Z'),
    });
    expect(readWindow([])).toEqual({ from: undefined, to: undefined });
  });
});
