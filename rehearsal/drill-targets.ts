/** What a rehearsal can kill with -9 and bring back, and how a list of them is read. */
import { z } from 'zod';
import type { SettingParser } from '../lib/settings.js';

/** The native stack's components, one of the rehearsal's consumers, and its hold sweeper. */
export const DRILL_TARGETS = ['connect', 'kafka', 'registry', 'consumer', 'seat-db', 'sweeper'] as const;
export type DrillTarget = (typeof DRILL_TARGETS)[number];

function isTarget(name: string): name is DrillTarget {
  return (DRILL_TARGETS as readonly string[]).includes(name);
}

/**
 * "connect,consumer" → ['connect', 'consumer']; "all" → every target; "" → none. A target may
 * appear twice (a second drill of it later). Unknown names are refused with the list of known ones.
 */
export function parseDrills(text: string): DrillTarget[] {
  const names = text.split(',').map((n) => n.trim()).filter((n) => n !== '');
  if (names.length === 1 && names[0] === 'all') return [...DRILL_TARGETS];
  const unknown = names.filter((n) => !isTarget(n));
  if (unknown.length > 0) throw new Error(`unknown drill target ${unknown.map((n) => `"${n}"`).join(', ')}: expected ${DRILL_TARGETS.join(', ')} or all`);
  return names.filter(isTarget);
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
  return { schema, expected: `a comma separated list of ${DRILL_TARGETS.join(', ')} (or all, or empty)`, example: 'connect,consumer' };
}
