/**
 * The slot conditions that hold at one poll, as alert candidates with the numbers of that moment.
 */
import type { AlertCandidate } from './alert-tracker.js';
import { formatBytes } from './byte-size.js';
import type { SlotHistory } from './slot-history.js';
import type { DatabaseReading, SlotReading } from './slot-readings.js';
import { SLOT_ALERTS } from '../alerts/slot-alerts.js';

export interface SlotRules {
  /** Required slots; empty means every slot is watched and none is required. */
  slots: readonly string[];
  inactiveAlertAfterMs: number;
  headroomWarningFraction: number;
  headroomCriticalFraction: number;
  growthMinBytes: number;
}

function slotFacts(slot: SlotReading, keepSize: number): string {
  const facts = [
    `wal_status=${slot.walStatus ?? 'null'}`,
    `active=${slot.active}`,
    `retained WAL ${slot.retainedBytes === null ? 'unknown' : formatBytes(slot.retainedBytes)}`,
    `safe_wal_size ${slot.safeWalSizeBytes === null ? 'null' : formatBytes(slot.safeWalSizeBytes)}`,
    `confirmed flush lag ${slot.confirmedFlushLagBytes === null ? 'unknown' : formatBytes(slot.confirmedFlushLagBytes)}`,
    `max_slot_wal_keep_size ${formatBytes(keepSize)}`,
  ];
  return `Slot ${slot.slotName} (${slot.plugin ?? slot.slotType}, database ${slot.database ?? '-'}): ${facts.join(', ')}.`;
}

function walStatusCandidate(slot: SlotReading, description: string): AlertCandidate | undefined {
  const labels = { slot_name: slot.slotName };
  const slotName = slot.slotName;
  const retained = slot.retainedBytes === null ? undefined : formatBytes(slot.retainedBytes);
  switch (slot.walStatus) {
    case 'extended':
      return {
        name: 'SlotWalExtended',
        labels,
        description,
        summary: SLOT_ALERTS.SlotWalExtended.summary({ slot: slotName, retained }),
      };
    case 'unreserved':
      return {
        name: 'SlotWalUnreserved',
        labels,
        description,
        summary: SLOT_ALERTS.SlotWalUnreserved.summary({ slot: slotName }),
      };
    case 'lost':
      return {
        name: 'SlotLost',
        labels,
        description,
        summary: SLOT_ALERTS.SlotLost.summary({ slot: slotName }),
      };
    default:
      return undefined;
  }
}

function headroomCandidate(
  slot: SlotReading,
  keepSize: number,
  rules: SlotRules,
  description: string,
): AlertCandidate | undefined {
  if (keepSize <= 0 || slot.safeWalSizeBytes === null || slot.walStatus === 'lost') return undefined;
  const fraction = slot.safeWalSizeBytes / keepSize;
  const left = `${formatBytes(Math.max(0, slot.safeWalSizeBytes))} of ${formatBytes(keepSize)}`;
  const labels = { slot_name: slot.slotName };
  if (fraction < rules.headroomCriticalFraction) {
    return {
      name: 'SlotHeadroomCritical',
      labels,
      description,
      summary: SLOT_ALERTS.SlotHeadroomCritical.summary({ slot: slot.slotName, left }),
    };
  }
  if (fraction < rules.headroomWarningFraction) {
    return {
      name: 'SlotHeadroomLow',
      labels,
      description,
      summary: SLOT_ALERTS.SlotHeadroomLow.summary({ slot: slot.slotName, left }),
    };
  }
  return undefined;
}

function inactiveCandidate(
  slot: SlotReading,
  history: SlotHistory,
  rules: SlotRules,
  now: Date,
  description: string,
): AlertCandidate | undefined {
  const since = history.inactiveSince(slot.slotName);
  if (slot.active || since === undefined) return undefined;
  const inactiveMs = now.getTime() - since.getTime();
  if (inactiveMs < rules.inactiveAlertAfterMs) return undefined;
  return {
    name: 'SlotInactive',
    labels: { slot_name: slot.slotName },
    description: `${description} Inactive since at least ${since.toISOString()}.`,
    summary: SLOT_ALERTS.SlotInactive.summary({ slot: slot.slotName, duration: `${Math.round(inactiveMs / 1000)} s` }),
  };
}

function growthCandidate(
  slot: SlotReading,
  history: SlotHistory,
  rules: SlotRules,
  description: string,
): AlertCandidate | undefined {
  const growth = history.walGrowingWithoutOutboxWrites(slot.slotName, rules.growthMinBytes);
  if (!growth) return undefined;
  return {
    name: 'SlotWalGrowingWithoutOutboxWrites',
    labels: { slot_name: slot.slotName },
    description: `${description} Retained WAL grew by ${formatBytes(growth.grownBytes)} over ${growth.polls} polls with no outbox insert.`,
    summary: SLOT_ALERTS.SlotWalGrowingWithoutOutboxWrites.summary({ slot: slot.slotName }),
  };
}

function missingCandidates(reading: DatabaseReading, rules: SlotRules): AlertCandidate[] {
  const present = new Set(reading.slots.map((slot) => slot.slotName));
  return rules.slots
    .filter((name) => !present.has(name))
    .map((name) => ({
      name: 'SlotMissing' as const,
      labels: { slot_name: name },
      description: `Slot ${name} is configured as required (SLOT_MONITOR_SLOTS) but pg_replication_slots has no row for it.`,
      summary: SLOT_ALERTS.SlotMissing.summary({ slot: name }),
    }));
}

/** Every slot condition holding in `reading`. `history` must already have observed it. */
export function slotAlertCandidates(
  reading: DatabaseReading,
  history: SlotHistory,
  rules: SlotRules,
): AlertCandidate[] {
  const watched =
    rules.slots.length === 0 ? reading.slots : reading.slots.filter((slot) => rules.slots.includes(slot.slotName));
  const keepSize = reading.maxSlotWalKeepSizeBytes;
  const candidates: (AlertCandidate | undefined)[] = [];
  for (const slot of watched) {
    const description = slotFacts(slot, keepSize);
    candidates.push(
      walStatusCandidate(slot, description),
      headroomCandidate(slot, keepSize, rules, description),
      inactiveCandidate(slot, history, rules, reading.takenAt, description),
      growthCandidate(slot, history, rules, description),
    );
  }
  return [...candidates.filter((c): c is AlertCandidate => c !== undefined), ...missingCandidates(reading, rules)];
}
