/** Choosing dead letters (by consumer, reason, ce_id, offset range) and summarising them by reason. */
import { printable } from './printable.js';
import type { DeadLetter } from './read-dead-letters.js';

export interface DeadLetterSelection {
  /** The consumers that gave up on them (dlq_consumer): one team redrives its own, not the others'. */
  consumers?: readonly string[];
  reasons?: readonly string[];
  ceIds?: readonly string[];
  /** Dead letter topic partition the offset range applies to (default: all). */
  partition?: number;
  fromOffset?: bigint;
  toOffset?: bigint;
}

export function selectDeadLetters(deadLetters: readonly DeadLetter[], selection: DeadLetterSelection): DeadLetter[] {
  const { consumers, reasons, ceIds, partition, fromOffset, toOffset } = selection;
  return deadLetters.filter((dead) => {
    const offset = BigInt(dead.offset);
    if (consumers && consumers.length > 0 && (dead.consumer === undefined || !consumers.includes(dead.consumer)))
      return false;
    if (reasons && reasons.length > 0 && !reasons.includes(dead.reason)) return false;
    if (ceIds && ceIds.length > 0 && (dead.ceId === undefined || !ceIds.includes(dead.ceId))) return false;
    if (partition !== undefined && dead.partition !== partition) return false;
    if (fromOffset !== undefined && offset < fromOffset) return false;
    return toOffset === undefined || offset <= toOffset;
  });
}

export interface ReasonGroup {
  reason: string;
  count: number;
  firstDeadLetteredAt: string | undefined;
  lastDeadLetteredAt: string | undefined;
  sourceTopics: string[];
  /** The consumers that gave up on them, each with its count. */
  consumers: { consumer: string; count: number }[];
  /** A few ce_ids to look up in the logs. */
  sampleCeIds: string[];
}

const SAMPLE_SIZE = 5;

function countsOf(values: readonly string[]): { consumer: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([consumer, count]) => ({ consumer, count }));
}

export function groupByReason(deadLetters: readonly DeadLetter[]): ReasonGroup[] {
  const groups = new Map<string, DeadLetter[]>();
  for (const dead of deadLetters) groups.set(dead.reason, [...(groups.get(dead.reason) ?? []), dead]);
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([reason, members]) => {
      const times = members
        .map((m) => m.deadLetteredAt)
        .filter((t): t is string => t !== undefined)
        .sort();
      return {
        reason,
        count: members.length,
        firstDeadLetteredAt: times[0],
        lastDeadLetteredAt: times.at(-1),
        sourceTopics: [...new Set(members.map((m) => m.sourceTopic ?? '?'))],
        consumers: countsOf(members.map((m) => m.consumer ?? '?')),
        sampleCeIds: members.slice(0, SAMPLE_SIZE).map((m) => m.ceId ?? '(no ce_id)'),
      };
    });
}

/** The summary `redrive list` prints; every value that came from a record goes through printable(). */
export function describeReasonGroups(topic: string, groups: readonly ReasonGroup[]): string {
  const shown = (texts: readonly (string | undefined)[]) => texts.map((t) => (t === undefined ? '?' : printable(t)));
  if (groups.length === 0) return `${printable(topic)} is empty.\n`;
  const lines = [`${printable(topic)}: ${groups.reduce((sum, g) => sum + g.count, 0)} dead letters`];
  for (const g of groups) {
    const [first, last] = shown([g.firstDeadLetteredAt, g.lastDeadLetteredAt]);
    lines.push(`  ${printable(g.reason)}: ${g.count} (from ${shown(g.sourceTopics).join(', ')}; ${first} … ${last})`);
    lines.push(`    failed in ${g.consumers.map((c) => `${printable(c.consumer)} (${c.count})`).join(', ')}`);
    lines.push(`    e.g. ce_id ${shown(g.sampleCeIds).join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}
