/** What a rehearsal can kill with -9 and bring back, and how a list of them is read. */
import { z } from 'zod';
import type { SettingParser } from '../lib/settings.js';

/**
 * The native stack's components, one of the rehearsal's consumers, its hold sweeper, and failover:
 * the seat database's primary killed and its standby promoted (a stack with STACK_POSTGRES_STANDBY=yes).
 */
export const DRILL_TARGETS = ['connect', 'kafka', 'registry', 'consumer', 'seat-db', 'sweeper', 'failover'] as const;
export type DrillTarget = (typeof DRILL_TARGETS)[number];

/** Drills that leave the stack changed for good (no way back to the old primary): never in `all`, at most once and last. */
const ONE_WAY: readonly DrillTarget[] = ['failover'];

function isTarget(name: string): name is DrillTarget {
  return (DRILL_TARGETS as readonly string[]).includes(name);
}

/**
 * "connect,consumer" → ['connect', 'consumer']; "all" → every target but failover; "" → none. A
 * target may appear twice (a second drill of it later), except failover: once, and last (after it
 * the stack runs on the promoted standby). Unknown names are refused with the list of known ones.
 */
export function parseDrills(text: string): DrillTarget[] {
  const names = text
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  if (names.length === 1 && names[0] === 'all') return DRILL_TARGETS.filter((t) => !ONE_WAY.includes(t));
  const unknown = names.filter((n) => !isTarget(n));
  if (unknown.length > 0)
    throw new Error(
      `unknown drill target ${unknown.map((n) => `"${n}"`).join(', ')}: expected ${DRILL_TARGETS.join(', ')} or all`,
    );
  const targets = names.filter(isTarget);
  for (const oneWay of ONE_WAY) {
    const at = targets.indexOf(oneWay);
    if (at !== -1 && (at !== targets.length - 1 || targets.lastIndexOf(oneWay) !== at)) {
      throw new Error(
        `${oneWay} can be drilled once, as the last drill (afterwards the seat database runs on the promoted standby): move it to the end of the list`,
      );
    }
  }
  return targets;
}

export function zDrills(): SettingParser<DrillTarget[]> {
  const schema = z.string().transform((text, ctx) => {
    try {
      return parseDrills(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
      return z.NEVER;
    }
  });
  return {
    schema,
    expected: `a comma separated list of ${DRILL_TARGETS.join(', ')} (or all, or empty)`,
    example: 'connect,consumer',
  };
}
