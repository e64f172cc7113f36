/**
 * What `redrive list` prints of a record's headers (no control character reaches the terminal), and
 * dead letters per consumer: the list names the consumer that gave up, --consumer selects its own.
 */
import { describe, expect, it } from 'vitest';
import { printable } from '../../../consumers/redrive/printable.js';
import type { DeadLetter } from '../../../consumers/redrive/read-dead-letters.js';
import { parseCommand } from '../../../consumers/redrive/arguments.js';
import { describeReasonGroups, groupByReason, selectDeadLetters } from '../../../consumers/redrive/select.js';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

function deadLetter(
  headers: Partial<Record<'reason' | 'consumer' | 'ceId' | 'sourceTopic' | 'deadLetteredAt', string>>,
): DeadLetter {
  return {
    topic: 't.dlq',
    partition: 0,
    offset: '0',
    key: null,
    value: null,
    headers: {},
    timestamp: '0',
    reason: headers.reason ?? 'undecodable',
    consumer: headers.consumer ?? 'seat-availability',
    error: '',
    ceId: headers.ceId,
    sourceTopic: headers.sourceTopic ?? 't',
    sourcePartition: 0,
    sourceOffset: '0',
    deadLetteredAt: headers.deadLetteredAt ?? '2026-12-01T10:00:00.000Z',
    attempts: 3,
  };
}

describe('printable', () => {
  it('escapes C0, DEL, C1, bidirectional and line-separator controls, and the backslash', () => {
    expect(printable('a\u001b[2Jb')).toBe('a\\x1b[2Jb');
    expect(printable('\u001b]0;title\u0007')).toBe('\\x1b]0;title\\x07');
    expect(printable('x\r\ny\tz\u0000')).toBe('x\\x0d\\x0ay\\x09z\\x00');
    expect(printable('del\u007f c1\u009b31m nel\u0085')).toBe('del\\x7f c1\\x9b31m nel\\x85');
    expect(printable('evil\u202etxt.exe \u2066x\u2069 a\u2028b')).toBe('evil\\u202etxt.exe \\u2066x\\u2069 a\\u2028b');
    expect(printable('C:\\x1b')).toBe('C:\\\\x1b');
  });

  it('leaves ordinary text alone, accents and all', () => {
    for (const text of [
      'not a cloudevent',
      '0190b3a4-5c6d-7e8f-9a0b-1c2d3e4f5a6b',
      'stagefront.seat',
      'Zoë’s café — 10:00',
    ])
      expect(printable(text)).toBe(text);
  });
});

describe('redrive list output', () => {
  it('prints no control character that came from a record', () => {
    const hostile = [
      deadLetter({
        reason: 'data error\u001b[2J\u001b[H',
        ceId: '\u009b31mred',
        sourceTopic: 'stagefront.seat\r\u001b[Kforged line',
      }),
      deadLetter({
        reason: 'data error\u001b[2J\u001b[H',
        ceId: 'x\u202ey',
        consumer: 'heat\u001b[2Jmap',
        deadLetteredAt: '2026\u001b]0;pwned\u0007',
      }),
    ];
    const text = describeReasonGroups('t.dlq', groupByReason(hostile));
    expect(text).not.toMatch(CONTROL);
    expect(text).toContain('  data error\\x1b[2J\\x1b[H: 2 (from stagefront.seat\\x0d\\x1b[Kforged line, t;');
    expect(text).toContain('e.g. ce_id \\x9b31mred, x\\u202ey');
    expect(text).toContain('failed in heat\\x1b[2Jmap (1), seat-availability (1)');
    expect(text).toContain('2026\\x1b]0;pwned\\x07');
  });
});

describe('dead letters per consumer', () => {
  const letters = [
    { ...deadLetter({ reason: 'data error', consumer: 'seat-heatmap', ceId: 'a' }), offset: '0' },
    { ...deadLetter({ reason: 'data error', consumer: 'sales-ledger', ceId: 'b' }), offset: '1' },
    { ...deadLetter({ reason: 'data error', consumer: 'seat-heatmap', ceId: 'c' }), offset: '2' },
    { ...deadLetter({ reason: 'undecodable', consumer: 'sales-ledger', ceId: 'd' }), offset: '3' },
  ];

  it('redrive list says which consumer each reason failed in, with counts', () => {
    const text = describeReasonGroups('t.dlq', groupByReason(letters));
    expect(text).toContain('  data error: 3 (from t;');
    expect(text).toContain('    failed in sales-ledger (1), seat-heatmap (2)');
    expect(text).toContain('    failed in sales-ledger (1)\n    e.g. ce_id d');
  });

  it("--consumer selects one team's dead letters only, by reason too", () => {
    const ids = (selection: Parameters<typeof selectDeadLetters>[1]) =>
      selectDeadLetters(letters, selection).map((dead) => dead.ceId);
    expect(ids({ consumers: ['seat-heatmap'], reasons: ['data error'] })).toEqual(['a', 'c']);
    expect(ids({ reasons: ['data error'] })).toEqual(['a', 'b', 'c']);
    expect(ids({ consumers: ['nobody'] })).toEqual([]);
  });

  it('takes --consumer on the command line, more than once', () => {
    const command = parseCommand([
      'redrive',
      't.dlq',
      '--consumer',
      'seat-heatmap',
      '--consumer',
      'x',
      '--reason',
      'data error',
    ]);
    expect(command?.selection.consumers).toEqual(['seat-heatmap', 'x']);
  });
});
