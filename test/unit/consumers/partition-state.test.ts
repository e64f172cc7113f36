/** The runtime's per-partition step choice (partition-state.ts), case by case, and the holds' timers; the decision after a try is in decision.test.ts. */
import { describe, expect, it, vi } from 'vitest';
import {
  type Hold,
  type PartitionState,
  PartitionStates,
  crashedBefore,
  nextStep,
} from '../../../consumers/runtime/partition-state.js';

function hold(unit: Hold['unit'], offset: string, more: Partial<Hold> = {}): Hold {
  return { offset, unit, failingSinceMs: 1_000, attempt: 2, ...more };
}

describe('nextStep: what to do with the first record not done', () => {
  const facts = { reason: 'crashed the consumer' as const, error: 'ended', attempts: 3 };
  const cases: {
    name: string;
    state: Pick<PartitionState, 'committed' | 'alone' | 'hold'>;
    offset: string;
    expected: unknown;
  }[] = [
    {
      name: 'a fresh partition: a group, counted first (it may be a redelivery)',
      state: { committed: false },
      offset: '5',
      expected: { kind: 'group', hold: undefined, count: true },
    },
    {
      name: 'committed since the join: a group, not counted',
      state: { committed: true },
      offset: '5',
      expected: { kind: 'group', hold: undefined, count: false },
    },
    {
      name: 'a group held here before the partition committed: tried again, counted again (its last try finished)',
      state: { committed: false, hold: hold('group', '5') },
      offset: '5',
      expected: { kind: 'group', hold: hold('group', '5'), count: true },
    },
    {
      name: 'a group held here after the partition committed: tried again, not counted',
      state: { committed: true, hold: hold('group', '5') },
      offset: '5',
      expected: { kind: 'group', hold: hold('group', '5'), count: false },
    },
    {
      name: 'a record held here: alone again, with its failure time',
      state: { committed: true, hold: hold('record', '5') },
      offset: '5',
      expected: { kind: 'alone', hold: hold('record', '5'), failingSinceMs: 1_000 },
    },
    {
      name: 'a dead letter held here: sent again with the same facts',
      state: { committed: true, hold: hold('dead-letter', '5', { deadLetter: facts }) },
      offset: '5',
      expected: { kind: 'dead-letter', hold: hold('dead-letter', '5', { deadLetter: facts }) },
    },
    {
      name: 'inside an isolation: alone, carrying the group failure time',
      state: { committed: true, alone: { throughOffset: '9', failingSinceMs: 700 } },
      offset: '9',
      expected: { kind: 'alone', hold: undefined, failingSinceMs: 700 },
    },
    {
      name: 'past the isolation: a group again (offsets compare as numbers, not text)',
      state: { committed: true, alone: { throughOffset: '9', failingSinceMs: undefined } },
      offset: '10',
      expected: { kind: 'group', hold: undefined, count: false },
    },
    {
      name: 'a hold at another offset does not apply here',
      state: { committed: true, hold: hold('record', '7') },
      offset: '5',
      expected: { kind: 'group', hold: undefined, count: false },
    },
  ];
  it.each(cases)('$name', ({ state, offset, expected }) => {
    expect(nextStep(state, offset)).toEqual(expected);
  });
});

describe('crashedBefore', () => {
  it.each([
    { unfinishedBefore: 0, headRecordAttempts: 0, expected: false },
    { unfinishedBefore: 1, headRecordAttempts: 0, expected: true },
    { unfinishedBefore: 0, headRecordAttempts: 1, expected: true },
  ])(
    'unfinished before $unfinishedBefore, head record attempts $headRecordAttempts: $expected',
    ({ expected, ...count }) => {
      expect(crashedBefore(count)).toBe(expected);
    },
  );
});

describe('PartitionStates', () => {
  function pausable() {
    const calls: string[] = [];
    const pause = () => {
      calls.push('pause');
      return () => calls.push('resume');
    };
    return { calls, pause };
  }

  it('resumes a held partition after its delay', () => {
    vi.useFakeTimers();
    try {
      const states = new PartitionStates(async () => {});
      const { calls, pause } = pausable();
      expect(states.holdFor(states.of('t', 0), pause, 1_000)).toBe(true);
      vi.advanceTimersByTime(999);
      expect(calls).toEqual(['pause']);
      expect(states.held()).toBe(1);
      vi.advanceTimersByTime(1);
      expect(calls).toEqual(['pause', 'resume']);
      expect(states.held()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('at a join: clears the timers, resumes the paused partitions, releases and forgets every state', async () => {
    const released: string[] = [];
    const states = new PartitionStates(async (state) => void released.push(`${state.topic}/${state.partition}`));
    const { calls, pause } = pausable();
    const state = states.of('t', 1);
    state.committed = true;
    states.holdFor(state, pause, 60_000);
    states.dropAll();
    await states.released();
    expect(calls).toEqual(['pause', 'resume']);
    expect(states.held()).toBe(0);
    expect(released).toEqual(['t/1']);
    expect(states.of('t', 1).committed).toBe(false);
  });

  it('at stop: no timer left, and no new hold', async () => {
    const states = new PartitionStates(async () => {});
    const { pause } = pausable();
    states.holdFor(states.of('t', 2), pause, 60_000);
    await states.close();
    expect(states.held()).toBe(0);
    expect(states.holdFor(states.of('t', 2), pause, 60_000)).toBe(false);
    expect(states.held()).toBe(0);
  });
});
