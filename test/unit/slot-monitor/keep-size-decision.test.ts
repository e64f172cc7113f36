/**
 * The enforcement decision on max_slot_wal_keep_size, case by case: the monitor never sets a cap
 * below what a slot retains plus the margin, holds a raise until every slot is at most the target
 * minus the margin, and caps -1 above the target when the target would invalidate a slot.
 */
import { describe, expect, it } from 'vitest';
import {
  keepSizeDecision,
  type KeepSizeDecision,
  type SlotRetention,
} from '../../../monitors/slot-monitor/keep-size-decision.js';
import { keepSizeMarginBytes, parseSlotMonitorConfig } from '../../../monitors/slot-monitor/settings.js';

const MB = 1024 * 1024;
const TARGET = 64 * MB;
const MARGIN = 16 * MB;

function slot(
  slotName: string,
  retainedMb: number | null,
  walStatus: SlotRetention['walStatus'] = 'reserved',
  safeMb: number | null = null,
): SlotRetention {
  return {
    slotName,
    retainedBytes: retainedMb === null ? null : retainedMb * MB,
    walStatus,
    safeWalSizeBytes: safeMb === null ? null : safeMb * MB,
  };
}

/** The decision in one line: "leave", "set 64", "hold 256 (a)", "set 81 (a)": sizes in MB, slots in need. */
function brief(decision: KeepSizeDecision): string {
  if (decision.action === 'leave') return 'leave';
  const raise = decision.raise ? ` (${decision.raise.slots.map((s) => s.slotName).join(',')})` : '';
  if (decision.action === 'hold') return `hold ${decision.raise.capBytes / MB}${raise}`;
  return `set ${decision.toBytes / MB}${raise}`;
}

const cases: { name: string; currentMb: number; slots: SlotRetention[]; expected: string }[] = [
  { name: 'at the target, nothing to do', currentMb: 64, slots: [slot('a', 10)], expected: 'leave' },
  {
    name: "at the target even with a slot past it: raising is the operator's call",
    currentMb: 64,
    slots: [slot('a', 90, 'unreserved')],
    expected: 'leave',
  },
  {
    name: 'below the target: raised to it, whatever the slots hold',
    currentMb: 32,
    slots: [slot('a', 40, 'unreserved')],
    expected: 'set 64',
  },
  {
    name: "an operator's raise with every slot well below: the target comes back",
    currentMb: 256,
    slots: [slot('a', 10), slot('b', 47)],
    expected: 'set 64',
  },
  {
    name: 'a raise with a slot exactly at target minus margin: the target comes back',
    currentMb: 256,
    slots: [slot('a', 48)],
    expected: 'set 64',
  },
  {
    name: 'a raise with a slot a little above target minus margin: held',
    currentMb: 256,
    slots: [slot('a', 49)],
    expected: 'hold 256 (a)',
  },
  {
    name: 'a raise with a slot past the target: held, the slot named',
    currentMb: 256,
    slots: [slot('a', 10), slot('b', 120, 'extended', 130)],
    expected: 'hold 256 (b)',
  },
  {
    name: 'a raise too small for the slot is still held, never lowered',
    currentMb: 100,
    slots: [slot('a', 120, 'unreserved', -20)],
    expected: 'hold 100 (a)',
  },
  {
    name: 'slots in need are listed largest first',
    currentMb: 512,
    slots: [slot('a', 60), slot('b', 200), slot('c', 5)],
    expected: 'hold 512 (b,a)',
  },
  {
    name: 'a lost slot has nothing to keep: the target comes back',
    currentMb: 256,
    slots: [slot('a', null, 'lost'), slot('b', 300, 'lost')],
    expected: 'set 64',
  },
  {
    name: 'a slot that reserves no WAL does not count',
    currentMb: 256,
    slots: [slot('phys', 500, null)],
    expected: 'set 64',
  },
  { name: 'no slots at all: a raise goes back to the target', currentMb: 256, slots: [], expected: 'set 64' },
  {
    name: '-1 with every slot well below: the target at once',
    currentMb: -1,
    slots: [slot('a', 20)],
    expected: 'set 64',
  },
  { name: '-1 with no slot: the target at once', currentMb: -1, slots: [], expected: 'set 64' },
  {
    name: '-1 with a slot past the target: capped at its retained WAL plus the margin, not the target',
    currentMb: -1,
    slots: [slot('a', 100, 'extended')],
    expected: 'set 116 (a)',
  },
  {
    name: '-1 with a slot just above target minus margin: capped just above the target',
    currentMb: -1,
    slots: [slot('a', 50)],
    expected: 'set 66 (a)',
  },
];

describe('keepSizeDecision (target 64 MB, margin 16 MB)', () => {
  it.each(cases)('$name', ({ currentMb, slots, expected }) => {
    expect(
      brief(
        keepSizeDecision({
          currentBytes: currentMb < 0 ? -1 : currentMb * MB,
          targetBytes: TARGET,
          marginBytes: MARGIN,
          slots,
        }),
      ),
    ).toBe(expected);
  });

  it('rounds the cap for -1 up to whole megabytes (Postgres takes megabytes) and says how far above the target it is', () => {
    const decision = keepSizeDecision({
      currentBytes: -1,
      targetBytes: TARGET,
      marginBytes: MARGIN,
      slots: [{ slotName: 'a', retainedBytes: 100 * MB + 1, walStatus: 'extended', safeWalSizeBytes: null }],
    });
    expect(decision).toEqual({
      action: 'set',
      toBytes: 117 * MB,
      raise: {
        capBytes: 117 * MB,
        aboveTargetBytes: 53 * MB,
        restoreAtBytes: 48 * MB,
        slots: [{ slotName: 'a', retainedBytes: 100 * MB + 1, walStatus: 'extended', safeWalSizeBytes: null }],
      },
    });
  });

  it("never sets a value below a slot's retained WAL plus the margin", () => {
    const sizes = [-1, 16, 48, 64, 65, 80, 128, 1024].map((mb) => (mb < 0 ? -1 : mb * MB));
    for (const currentBytes of sizes) {
      for (const retainedMb of [0, 10, 47, 48, 49, 63, 64, 65, 100, 900]) {
        const slots = [slot('a', retainedMb, retainedMb > 64 ? 'extended' : 'reserved')];
        const decision = keepSizeDecision({ currentBytes, targetBytes: TARGET, marginBytes: MARGIN, slots });
        if (decision.action !== 'set' || (currentBytes >= 0 && decision.toBytes >= currentBytes)) continue;
        expect(decision.toBytes, `from ${currentBytes} with ${retainedMb} MB retained`).toBeGreaterThanOrEqual(
          retainedMb * MB + MARGIN,
        );
      }
    }
  });
});

describe('keepSizeDecision with a margin smaller than a WAL segment', () => {
  // Postgres invalidates a slot by whole segments: a 1 MB margin on 16 MB segments is no margin at all.
  const inputs = { targetBytes: TARGET, marginBytes: 1 * MB, walSegmentBytes: 16 * MB };
  it('keeps one segment instead: a raise stays while a slot is within a segment of the target', () => {
    expect(brief(keepSizeDecision({ ...inputs, currentBytes: 256 * MB, slots: [slot('a', 60)] }))).toBe('hold 256 (a)');
    expect(brief(keepSizeDecision({ ...inputs, currentBytes: 256 * MB, slots: [slot('a', 48)] }))).toBe('set 64');
  });
  it('caps -1 a whole segment above what the slot retains', () => {
    expect(brief(keepSizeDecision({ ...inputs, currentBytes: -1, slots: [slot('a', 100, 'extended')] }))).toBe(
      'set 116 (a)',
    );
  });
});

describe('SLOT_MONITOR_KEEP_SIZE_MARGIN', () => {
  const parse = (env: Record<string, string>) =>
    parseSlotMonitorConfig({ SLOT_MONITOR_DATABASE_URL: 'postgres://m:p@127.0.0.1:5432/seats', ...env });

  it('defaults to a quarter of the target, in whole megabytes', () => {
    expect(keepSizeMarginBytes(parse({}))).toBe(1024 * MB);
    expect(keepSizeMarginBytes(parse({ SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE: '10MB' }))).toBe(3 * MB);
  });

  it('takes a size too', () => {
    expect(keepSizeMarginBytes(parse({ SLOT_MONITOR_KEEP_SIZE_MARGIN: '512MB' }))).toBe(512 * MB);
  });

  it('refuses a margin of nothing, of all the target or more, and a percentage out of range, naming the setting', () => {
    expect(() => parse({ SLOT_MONITOR_KEEP_SIZE_MARGIN: '0' })).toThrow(/SLOT_MONITOR_KEEP_SIZE_MARGIN/);
    expect(() => parse({ SLOT_MONITOR_KEEP_SIZE_MARGIN: '100%' })).toThrow(/SLOT_MONITOR_KEEP_SIZE_MARGIN/);
    expect(() => parse({ SLOT_MONITOR_KEEP_SIZE_MARGIN: '0%' })).toThrow(/SLOT_MONITOR_KEEP_SIZE_MARGIN/);
    expect(() => parse({ SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE: '64MB', SLOT_MONITOR_KEEP_SIZE_MARGIN: '64MB' })).toThrow(
      'SLOT_MONITOR_KEEP_SIZE_MARGIN must be smaller than SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE',
    );
  });
});
