/**
 * Does a rule's timing make sense for the Prometheus that evaluates it? A rule reads samples up to a
 * scrape interval old, at evaluations an evaluation interval apart, so:
 * - a `for` shorter than either interval cannot mean what it says (it is "at the next evaluation");
 * - a range selector needs at least 4 scrape intervals to hold the 2 samples rate(), increase(),
 *   delta() and changes() need, whatever the scrape's jitter;
 * - an age computed with time() from an exported timestamp includes the scrape delay (up to one
 *   scrape interval, plus one for a scrape that comes late) and the evaluation delay: a threshold on
 *   it must exceed 2 × scrape interval + evaluation interval, or it fires while the program works
 *   (HoldSweeperNoRecentSuccess did, at 3 × a 1 s sweeper interval).
 * Pure: test/unit/alerts/rule-intervals.test.ts runs it over the catalogue for every Prometheus the
 * project configures.
 */
import type { AnyAlertSpec } from './alert-spec.js';

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_536_000 };

/** A Prometheus duration ('15s', '1m30s', '500ms') in seconds. */
export function durationSeconds(text: string): number {
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== text)
    throw new Error(`not a Prometheus duration: ${text}`);
  return parts.reduce((sum, [, value, unit]) => sum + Number(value) * (UNIT_SECONDS[unit ?? ''] ?? NaN), 0);
}

const UNIT_WORDS: Record<string, string> = {
  ms: 'millisecond',
  s: 'second',
  m: 'minute',
  h: 'hour',
  d: 'day',
  w: 'week',
  y: 'year',
};

/** A Prometheus duration in words, as a summary says it: '2m' → '2 minutes', '1m30s' → '1 minute 30 seconds'. */
export function durationWords(text: string): string {
  durationSeconds(text); // refuses what is not a duration
  return [...text.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)]
    .map(([, value, unit]) => `${value} ${UNIT_WORDS[unit ?? '']}${value === '1' ? '' : 's'}`)
    .join(' ');
}

export interface PrometheusTiming {
  /** Where this Prometheus runs, for the messages. */
  name: string;
  scrapeSeconds: number;
  evaluationSeconds: number;
}

/** Every way the rule's timing falls short of `timing`, as sentences; empty when it is sound. */
export function intervalProblems(name: string, spec: AnyAlertSpec, timing: PrometheusTiming): string[] {
  const rule = spec.rule;
  if (!rule) return [];
  const { scrapeSeconds: scrape, evaluationSeconds: evaluation } = timing;
  const where = `${name} (${timing.name}: scrape ${scrape} s, evaluation ${evaluation} s)`;
  const problems: string[] = [];
  if (rule.for !== undefined && durationSeconds(rule.for) < Math.max(scrape, evaluation))
    problems.push(`${where}: for ${rule.for} is shorter than an interval`);
  for (const [, range] of rule.expr.matchAll(/\[(\w+)(?::\w*)?\]/g)) {
    if (durationSeconds(range ?? '') < 4 * scrape)
      problems.push(`${where}: range [${range}] holds fewer than 4 scrape intervals`);
  }
  for (const [, offset] of rule.expr.matchAll(/\boffset\s+(\w+)/g)) {
    if (durationSeconds(offset ?? '') < scrape) problems.push(`${where}: offset ${offset} is shorter than a scrape`);
  }
  const staleness = rule.staleness ?? [];
  if (/\btime\(\)/.test(rule.expr) && staleness.length === 0)
    problems.push(`${where}: uses time() without declaring its staleness thresholds`);
  const least = 2 * scrape + evaluation;
  for (const threshold of staleness) {
    if (threshold.minSeconds <= least)
      problems.push(
        `${where}: ${threshold.what} can be ${threshold.minSeconds} s, not above 2 × scrape + evaluation = ${least} s`,
      );
  }
  return problems;
}
