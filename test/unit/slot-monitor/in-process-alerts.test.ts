/**
 * The in-process conditions no drill raised before: SlotHeadroomLow and SlotHeadroomCritical (a
 * real slot cannot be brought near its cap in seconds), StandbySlotBehind (needs a standby that
 * trails), each table-driven with the case that fires next to the ones
 * that do not, and each summary the catalogue's sentence.
 */
import { describe, expect, it } from 'vitest';
import { SLOT_ALERTS } from '../../../monitors/alerts/slot-alerts.js';
import { slotAlertCandidates, type SlotRules } from '../../../monitors/slot-monitor/slot-conditions.js';
import { SlotHistory } from '../../../monitors/slot-monitor/slot-history.js';
import type { DatabaseReading, SlotReading, WalStatus } from '../../../monitors/slot-monitor/slot-readings.js';
import { judgeStandbyCopy, type StandbySlot } from '../../../monitors/slot-monitor/standby-slots.js';

const MB = 1024 * 1024;
const rules: SlotRules = {
  slots: [],
  inactiveAlertAfterMs: 300_000,
  headroomWarningFraction: 0.5,
  headroomCriticalFraction: 0.2,
  growthMinBytes: 64 * MB,
};

function reading(safeWalSizeBytes: number | null, keepSize: number, walStatus: WalStatus | null): DatabaseReading {
  const slot: SlotReading = {
    slotName: 'cdc',
    slotType: 'logical',
    plugin: 'pgoutput',
    database: 'seats',
    active: true,
    walStatus,
    safeWalSizeBytes,
    retainedBytes: 10 * MB,
    confirmedFlushLagBytes: 0,
  };
  return {
    takenAt: new Date(),
    slots: [slot],
    maxSlotWalKeepSizeBytes: keepSize,
    walPositionBytes: 0,
    outboxInserts: 0,
  };
}

function headroomAlerts(safe: number | null, keepSize: number, walStatus: WalStatus | null = 'reserved'): string[] {
  const now = reading(safe, keepSize, walStatus);
  const history = new SlotHistory(3);
  history.observe(now);
  return slotAlertCandidates(now, history, rules)
    .map((candidate) => candidate.name)
    .filter((name) => name.startsWith('SlotHeadroom'));
}

describe('SlotHeadroomLow and SlotHeadroomCritical', () => {
  it.each([
    ['60 of 100 MB left', 60 * MB, 100 * MB, 'reserved', []],
    ['exactly half left', 50 * MB, 100 * MB, 'reserved', []],
    ['40 of 100 MB left: low', 40 * MB, 100 * MB, 'reserved', ['SlotHeadroomLow']],
    ['10 of 100 MB left: critical, and only critical', 10 * MB, 100 * MB, 'extended', ['SlotHeadroomCritical']],
    ['past the cap (negative safe_wal_size): critical', -5 * MB, 100 * MB, 'unreserved', ['SlotHeadroomCritical']],
    ['no cap (-1): never', 1 * MB, -1, 'reserved', []],
    ['a lost slot: SlotLost instead', 0, 100 * MB, 'lost', []],
    ['a slot that reserves no WAL', null, 100 * MB, null, []],
  ] as const)('%s', (_name, safe, keepSize, walStatus, expected) => {
    expect(headroomAlerts(safe, keepSize, walStatus)).toEqual(expected);
  });

  it("says it with the catalogue's sentence", () => {
    const now = reading(40 * MB, 100 * MB, 'reserved');
    const history = new SlotHistory(3);
    history.observe(now);
    const low = slotAlertCandidates(now, history, rules).find((candidate) => candidate.name === 'SlotHeadroomLow');
    expect(low?.summary).toBe(SLOT_ALERTS.SlotHeadroomLow.summary({ slot: 'cdc', left: '40 MB of 100 MB' }));
  });
});

describe('StandbySlotBehind and StandbySlotNotSynchronized', () => {
  const primary = { slot_name: 'cdc', failover: true, flushed: String(500 * MB) };
  const copy = (flushedMb: number, extra: Partial<StandbySlot> = {}): StandbySlot => ({
    slot_name: 'cdc',
    synced: true,
    temporary: false,
    invalidation_reason: null,
    flushed: String(flushedMb * MB),
    ...extra,
  });
  it.each([
    ['a copy in step', copy(500), undefined],
    ['a copy exactly the maximum behind', copy(436), undefined],
    ['a copy 100 MB behind', copy(400), 'StandbySlotBehind'],
    ['no copy', undefined, 'StandbySlotNotSynchronized'],
    [
      'a temporary copy far behind: not synchronized, not behind',
      copy(0, { temporary: true }),
      'StandbySlotNotSynchronized',
    ],
  ] as const)('%s', (_name, standbyCopy, expected) => {
    expect(judgeStandbyCopy(primary, standbyCopy, 'standby:5433/seats', 64 * MB).candidate?.name).toBe(expected);
  });

  it('names the lag and reports it for the metrics', () => {
    const judged = judgeStandbyCopy(primary, copy(400), 'standby:5433/seats', 64 * MB);
    expect(judged.state).toEqual({ slotName: 'cdc', standby: 'standby:5433/seats', synced: true, lagBytes: 100 * MB });
    expect(judged.candidate?.summary).toBe(
      SLOT_ALERTS.StandbySlotBehind.summary({ slot: 'cdc', standby: 'standby:5433/seats', lag: '100 MB' }),
    );
  });
});
