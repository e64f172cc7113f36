/**
 * The outbox purge's decision, table-driven: what the slot, the checkpoints and the newest clean
 * reconciliation allow. The SQL that applies it per row is tested against Postgres in
 * test/seat-service/purge-interlock.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  confirmedCheckpoint,
  decidePurge,
  lsnValue,
  type PurgeCheckpoint,
  type PurgeInputs,
  type SlotReading,
} from '../../../seat-service/purge-decision.js';

const DAY = 86_400_000;
const NOW = new Date('2026-12-01T12:00:00Z');
const checkpoint = (walLsn: string, snapshotXmin: bigint): PurgeCheckpoint => ({ takenAt: NOW, walLsn, snapshotXmin });
const OLD = checkpoint('0/1000000', 900n);
const NEWER = checkpoint('0/2000000', 1500n);
const healthy = (confirmedFlushLsn: string | null): SlotReading => ({
  exists: true,
  walStatus: 'reserved',
  active: true,
  confirmedFlushLsn,
});

function inputs(overrides: Partial<PurgeInputs>): PurgeInputs {
  return {
    slotName: 'stagefront_outbox',
    slot: healthy('0/3000000'),
    checkpoints: [OLD, NEWER],
    reconciledThrough: new Date(NOW.getTime() - DAY),
    now: NOW,
    retentionMs: 14 * DAY,
    ...overrides,
  };
}

describe('decidePurge', () => {
  const skips: {
    name: string;
    given: Partial<PurgeInputs>;
    reason: string;
    forget: boolean;
    record: boolean;
    says: RegExp;
  }[] = [
    {
      name: 'no slot',
      given: { slot: { exists: false } },
      reason: 'slot_missing',
      forget: true,
      record: false,
      says: /does not exist.*slot-recovery/,
    },
    {
      name: 'a lost slot, even with a reader and a confirmed checkpoint',
      given: { slot: { exists: true, walStatus: 'lost', active: true, confirmedFlushLsn: '0/3000000' } },
      reason: 'slot_lost',
      forget: true,
      record: false,
      says: /is lost.*re-emit.*slot-recovery -- --since auto --apply/,
    },
    {
      name: 'an unreserved slot (about to be lost)',
      given: { slot: { exists: true, walStatus: 'unreserved', active: true, confirmedFlushLsn: '0/3000000' } },
      reason: 'slot_unreserved',
      forget: false,
      record: false,
      says: /unreserved.*max_slot_wal_keep_size/,
    },
    {
      name: 'a slot without a reader',
      given: { slot: { exists: true, walStatus: 'reserved', active: false, confirmedFlushLsn: '0/3000000' } },
      reason: 'slot_inactive',
      forget: false,
      record: false,
      says: /no reader.*start the connector/,
    },
    {
      name: 'an inactive slot whose wal_status is extended',
      given: { slot: { exists: true, walStatus: 'extended', active: false, confirmedFlushLsn: '0/3000000' } },
      reason: 'slot_inactive',
      forget: false,
      record: false,
      says: /no reader/,
    },
    {
      name: 'a slot behind every checkpoint',
      given: { slot: healthy('0/0FFFFFF') },
      reason: 'no_checkpoint_confirmed',
      forget: false,
      record: true,
      says: /has not yet passed a purge checkpoint/,
    },
    {
      name: 'no checkpoint at all',
      given: { checkpoints: [] },
      reason: 'no_checkpoint_confirmed',
      forget: false,
      record: true,
      says: /leaves a checkpoint/,
    },
    {
      name: 'no confirmed position',
      given: { slot: healthy(null) },
      reason: 'no_checkpoint_confirmed',
      forget: false,
      record: true,
      says: /confirmed up to nothing/,
    },
    {
      name: 'no clean reconciliation recorded',
      given: { reconciledThrough: undefined },
      reason: 'not_reconciled',
      forget: false,
      record: true,
      says: /npm run reconcile.*RECONCILE_COVERAGE_DB_URL/,
    },
  ];

  it.each(skips)('deletes nothing with $name', ({ given, reason, forget, record, says }) => {
    const decision = decidePurge(inputs(given));
    expect(decision).toMatchObject({ action: 'skip', reason, forgetCheckpoints: forget, recordCheckpoint: record });
    if (decision.action === 'skip') expect(decision.sentence).toMatch(says);
  });

  const purges: { name: string; given: Partial<PurgeInputs>; xactBefore: bigint; createdBefore: Date }[] = [
    {
      name: 'the slot past both checkpoints: the newer one',
      given: {},
      xactBefore: 1500n,
      createdBefore: new Date(NOW.getTime() - 14 * DAY),
    },
    {
      name: 'the slot exactly at the newer checkpoint',
      given: { slot: healthy('0/2000000') },
      xactBefore: 1500n,
      createdBefore: new Date(NOW.getTime() - 14 * DAY),
    },
    {
      name: 'the slot between the two: the older one',
      given: { slot: healthy('0/1FFFFFF') },
      xactBefore: 900n,
      createdBefore: new Date(NOW.getTime() - 14 * DAY),
    },
    {
      name: 'reconciliation behind the retention: its end bounds the purge',
      given: { reconciledThrough: new Date(NOW.getTime() - 20 * DAY) },
      xactBefore: 1500n,
      createdBefore: new Date(NOW.getTime() - 20 * DAY),
    },
    {
      name: 'an extended but streaming slot',
      given: { slot: { exists: true, walStatus: 'extended', active: true, confirmedFlushLsn: '0/3000000' } },
      xactBefore: 1500n,
      createdBefore: new Date(NOW.getTime() - 14 * DAY),
    },
  ];

  it('without a reconciliation, still lets the checkpoints older than the confirmed one go', () => {
    expect(decidePurge(inputs({ reconciledThrough: undefined }))).toMatchObject({
      action: 'skip',
      supersededBelow: NEWER.walLsn,
    });
    expect(decidePurge(inputs({ slot: healthy('0/0FFFFFF') }))).not.toHaveProperty('supersededBelow');
  });

  it.each(purges)('purges with $name', ({ given, xactBefore, createdBefore }) => {
    expect(decidePurge(inputs(given))).toMatchObject({
      action: 'purge',
      xactBefore,
      createdBefore,
      recordCheckpoint: true,
    });
  });
});

describe('LSNs', () => {
  it('compare as numbers, not as text', () => {
    expect(lsnValue('1/0') > lsnValue('0/FFFFFFFF')).toBe(true);
    expect(lsnValue('0/A0') > lsnValue('0/9F')).toBe(true);
    expect(lsnValue('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(() => lsnValue('nonsense')).toThrow(/not a pg_lsn/);
  });

  it('picks the newest checkpoint at or below the confirmed position, whatever their order', () => {
    const high = checkpoint('1/0', 3000n);
    expect(confirmedCheckpoint([high, NEWER, OLD], '0/FFFFFFFF')).toBe(NEWER);
    expect(confirmedCheckpoint([OLD, high, NEWER], '1/0')).toBe(high);
    expect(confirmedCheckpoint([OLD], '0/0')).toBeUndefined();
  });
});
