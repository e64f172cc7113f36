/**
 * What the monitor does with max_slot_wal_keep_size at one poll, as a pure function of what it read.
 * Lowering the cap below the WAL a slot retains invalidates that slot at the next checkpoint, so the
 * one rule is: a value is safe to set when every slot retains at least `margin` less than it.
 *
 * | current setting                  | slots                                   | decision                                  |
 * | -------------------------------- | --------------------------------------- | ----------------------------------------- |
 * | the target                       | any                                     | leave                                     |
 * | below the target                 | any                                     | set the target (raising is always safe)   |
 * | above the target (a raise)       | every one ≤ target − margin             | set the target                            |
 * | above the target (a raise)       | one retains more                        | hold the raise, alert                     |
 * | -1 (unlimited)                   | every one ≤ target − margin             | set the target                            |
 * | -1 (unlimited)                   | one retains more                        | set max retained + margin, alert          |
 *
 * -1 is capped at once, as ever (with no cap a dead slot fills the disk), but not at the target when
 * that would invalidate a slot: at the largest retained WAL plus the margin, which is then held like
 * any raise and brought back to the target once the slots are below it. The monitor never raises a cap
 * on its own beyond that (more WAL on the disk is the operator's decision), and it restores the whole
 * target at once rather than stepping down poll by poll. Lost slots and slots that reserve no WAL
 * have nothing to keep and do not count.
 */
import type { WalStatus } from './slot-readings.js';

/** What the decision needs of a slot (a SlotReading has it all). */
export interface SlotRetention {
  slotName: string;
  /** pg_current_wal_lsn() - restart_lsn; null when the slot has no restart_lsn. */
  retainedBytes: number | null;
  walStatus: WalStatus | null;
  safeWalSizeBytes: number | null;
}

export interface KeepSizeInputs {
  /** The database's max_slot_wal_keep_size in bytes; -1 is unlimited. */
  currentBytes: number;
  targetBytes: number;
  /** A slot must retain at least this much less than a cap before the monitor sets that cap. */
  marginBytes: number;
  /**
   * The cluster's wal_segment_size: Postgres invalidates a slot by whole segments, so a margin
   * smaller than one segment is taken as one segment.
   */
  walSegmentBytes?: number;
  slots: readonly SlotRetention[];
}

/** A slot that keeps the cap above the target: it retains more than the target minus the margin. */
interface SlotInNeed {
  slotName: string;
  retainedBytes: number;
  walStatus: WalStatus | null;
  safeWalSizeBytes: number | null;
}

/** The cap stands above the target because of these slots. */
export interface RaiseHeld {
  /** The cap after the decision: the operator's value, or what the monitor set instead of -1. */
  capBytes: number;
  /** capBytes - target. */
  aboveTargetBytes: number;
  /** The monitor restores the target once every slot retains at most this (target - margin). */
  restoreAtBytes: number;
  /** Largest first. */
  slots: SlotInNeed[];
}

export type KeepSizeDecision =
  { action: 'leave' } | { action: 'set'; toBytes: number; raise?: RaiseHeld } | { action: 'hold'; raise: RaiseHeld };

const MB = 1024 * 1024;

/** Postgres takes this setting in whole megabytes: a cap that must hold `bytes` is rounded up. */
function wholeMegabytesAtLeast(bytes: number): number {
  return Math.ceil(bytes / MB) * MB;
}

/** The margin the decision keeps: the setting, but never less than one WAL segment. */
export function effectiveMarginBytes(inputs: Pick<KeepSizeInputs, 'marginBytes' | 'walSegmentBytes'>): number {
  return Math.max(inputs.marginBytes, inputs.walSegmentBytes ?? 0);
}

function slotsInNeed(inputs: KeepSizeInputs): SlotInNeed[] {
  const restoreAt = inputs.targetBytes - effectiveMarginBytes(inputs);
  return inputs.slots
    .filter((slot) => slot.walStatus !== null && slot.walStatus !== 'lost' && slot.retainedBytes !== null)
    .map((slot) => ({
      slotName: slot.slotName,
      retainedBytes: slot.retainedBytes ?? 0,
      walStatus: slot.walStatus,
      safeWalSizeBytes: slot.safeWalSizeBytes,
    }))
    .filter((slot) => slot.retainedBytes > restoreAt)
    .sort((a, b) => b.retainedBytes - a.retainedBytes || a.slotName.localeCompare(b.slotName));
}

function raiseHeld(inputs: KeepSizeInputs, capBytes: number, slots: SlotInNeed[]): RaiseHeld {
  return {
    capBytes,
    aboveTargetBytes: capBytes - inputs.targetBytes,
    restoreAtBytes: inputs.targetBytes - effectiveMarginBytes(inputs),
    slots,
  };
}

export function keepSizeDecision(inputs: KeepSizeInputs): KeepSizeDecision {
  const { currentBytes, targetBytes } = inputs;
  const marginBytes = effectiveMarginBytes(inputs);
  if (currentBytes === targetBytes) return { action: 'leave' };
  if (currentBytes >= 0 && currentBytes < targetBytes) return { action: 'set', toBytes: targetBytes };
  const inNeed = slotsInNeed(inputs);
  const largest = inNeed[0];
  if (!largest) return { action: 'set', toBytes: targetBytes };
  if (currentBytes > targetBytes) return { action: 'hold', raise: raiseHeld(inputs, currentBytes, inNeed) };
  const capBytes = wholeMegabytesAtLeast(largest.retainedBytes + marginBytes);
  return { action: 'set', toBytes: capBytes, raise: raiseHeld(inputs, capBytes, inNeed) };
}
