/**
 * The rehearsal's freshness objectives: how stale the crowd's and the buyers' view may get, and how
 * soon after a drill it must be right again. A run that loses nothing but leaves the availability
 * pages a minute behind fails them, so its verdict is not a success. Pure: the rehearsal feeds it
 * the events' times from the databases (rehearsal/stages.ts) and the drills it ran.
 */
import { percentiles } from '../lib/percentiles.js';
import { confirmationEmailSettings } from '../consumers/confirmation-email/consumer.js';
import type { Check } from './consistency.js';
import type { DrillTarget } from './drill-targets.js';
import type { DrillRecord } from './record.js';
import { FRESH_LIMIT_MS, FRESHNESS_CONSUMER } from './freshness.js';
import { endToEndMs, type EventTimes, STEP_STAGES } from './stages.js';

/** One consumer's objective: commit → effect at `quantile` within `limitMs`. */
export interface FreshnessObjective {
  consumer: string;
  /** What the consumer's effect is, as a check names it. */
  effect: string;
  quantile: 'p99' | 'max';
  limitMs: number;
  /** Judge only the events that arrived outside every drill's budget (a drill is allowed to make them late). */
  outsideDrills: boolean;
  /** The effect leaves the building (an email): an event taken but never completed fails the objective. */
  mustComplete: boolean;
}

export const FRESHNESS_OBJECTIVES: readonly FreshnessObjective[] = [
  {
    consumer: FRESHNESS_CONSUMER,
    effect: 'seat availability',
    quantile: 'p99',
    limitMs: FRESH_LIMIT_MS,
    outsideDrills: true,
    mustComplete: false,
  },
  {
    consumer: 'confirmation-email',
    effect: 'confirmation email accepted',
    quantile: 'max',
    limitMs: Number(confirmationEmailSettings.settings.deadlineMs.default),
    outsideDrills: false,
    mustComplete: true,
  },
];

/**
 * How long after its kill each drill may leave the availability pages stale, on top of the time
 * the part is deliberately left down (REHEARSAL_DRILL_DOWN_MS): what a crowd can forgive during an
 * eighty-second on-sale. Each is about what its recovery takes on a 2-core machine (docs/rehearsal.md):
 * a JVM's start and rejoin for Kafka and Connect, the group noticing a dead member (6 s) and handing
 * its partitions over for a consumer, the reconnect for a database.
 */
export const DRILL_FRESH_BUDGET_MS: Readonly<Record<DrillTarget, number>> = {
  connect: 30_000,
  kafka: 30_000,
  registry: 20_000,
  consumer: 20_000,
  'seat-db': 15_000,
  sweeper: 15_000,
  failover: 30_000,
};

/** A drill's budget: its target's, plus the time the part is left down. */
export function drillFreshBudgetMs(target: DrillTarget, downMs: number): number {
  return DRILL_FRESH_BUDGET_MS[target] + downMs;
}

/** A drill as the objectives see it. */
export interface DrillSpan {
  target: DrillTarget;
  killedAt: number;
  /** How long after killedAt it may leave the pages stale (drillFreshBudgetMs). */
  freshBudgetMs: number;
}

/** The check of one objective; its name is what docs/rehearsal.md lists. */
export function objectiveCheckName(o: FreshnessObjective): string {
  const within = o.limitMs >= 60_000 ? `${o.limitMs / 60_000} min` : `${o.limitMs / 1000} s`;
  return `commit → ${o.effect} ${o.quantile === 'max' ? 'every event' : o.quantile} within ${within}${o.outsideDrills ? ' outside drills' : ''}`;
}

/** The name of the check that every drill was fresh again within its budget. */
export const DRILL_BUDGET_CHECK = 'every drill fresh again within its budget';

/**
 * The fewest events a p99 is judged over: with fewer, the 99th percentile is one of the few
 * slowest events (the second slowest of 200), which a busy machine's hiccup decides, not the
 * pipeline. At 1,000 it takes more than ten slow events to fail. The default crowd gives about 3,500.
 */
export const MIN_EVENTS_FOR_P99 = 1_000;

/** One check per objective, judged from the events' times. */
export function objectiveChecks(events: readonly EventTimes[], drills: readonly DrillSpan[]): Check[] {
  return FRESHNESS_OBJECTIVES.map((o) => objectiveCheck(o, events, drills));
}

function objectiveCheck(o: FreshnessObjective, all: readonly EventTimes[], drills: readonly DrillSpan[]): Check {
  const name = objectiveCheckName(o);
  const inBudget = (at: number) => drills.some((d) => at >= d.killedAt && at <= d.killedAt + d.freshBudgetMs);
  const mine = all.filter((e) => e.consumer === o.consumer);
  const judged = o.outsideDrills ? mine.filter((e) => !inBudget(e.received)) : mine;
  const where = `${judged.length} events${o.outsideDrills && drills.length > 0 ? ` outside drills (${mine.length - judged.length} within a drill's budget left out)` : ''}`;
  if (judged.length === 0) return { name, ok: true, detail: `no ${o.consumer} events to judge` };
  const unfinished = o.mustComplete ? judged.filter((e) => e.completed === null).length : 0;
  if (unfinished > 0)
    return {
      name,
      ok: false,
      detail: `${unfinished} of ${judged.length} events taken and never completed (${o.effect})`,
    };
  const value = percentiles(judged.map(endToEndMs))[o.quantile];
  const detail = `${o.quantile} ${seconds(value)} over ${where}`;
  if (o.quantile === 'p99' && judged.length < MIN_EVENTS_FOR_P99)
    return { name, ok: true, detail: `${detail}: too few to judge a p99 (fewer than ${MIN_EVENTS_FOR_P99})` };
  const ok = value <= o.limitMs;
  if (ok) return { name, ok, detail };
  const slow = judged.filter((e) => endToEndMs(e) > o.limitMs);
  return { name, ok, detail: `${detail}; ${slow.length} slower than ${seconds(o.limitMs)}${blame(slow, drills)}` };
}

/** The step the slow events spent most in, all summed; null when none was recorded. */
export function slowestStage(slow: readonly EventTimes[]): string | null {
  const sums = STEP_STAGES.map(({ stage, of }) => ({
    stage,
    ms: slow.reduce((sum, e) => sum + Math.max(0, of(e) ?? 0), 0),
  }));
  const top = sums.reduce((a, b) => (b.ms > a.ms ? b : a));
  return top.ms > 0 ? top.stage : null;
}

/**
 * Where the slow events lost their time: the step they spent most in, and the drill (from its kill
 * to the next's) most of them arrived after. Empty when nothing was slow.
 */
export function blame(slow: readonly EventTimes[], drills: readonly Pick<DrillSpan, 'target' | 'killedAt'>[]): string {
  if (slow.length === 0) return '';
  const stage = slowestStage(slow);
  const after = new Map<string, number>();
  for (const e of slow) {
    const drill = drills.filter((d) => d.killedAt <= e.received).at(-1);
    const label = drill === undefined ? 'before any drill' : `after the ${drill.target} drill`;
    after.set(label, (after.get(label) ?? 0) + 1);
  }
  const [label, count] = [...after.entries()].reduce((a, b) => (b[1] > a[1] ? b : a));
  return `${stage === null ? '' : `, most of it in ${stage}`}; ${count} of them ${label}`;
}

/**
 * A drill's time to fresh against its budget: null when it held (or there was nothing to judge),
 * else what went over. A window that closed on a slow event was never fresh again at all.
 */
export function overBudget(drill: {
  killedAt: number;
  freshAt?: number | null;
  freshBudgetMs?: number;
  staleAtEnd?: boolean;
}): string | null {
  if (drill.freshAt === null || drill.freshAt === undefined || drill.freshBudgetMs === undefined) return null;
  if (drill.staleAtEnd === true)
    return 'never fresh again before the next drill or the end of the run (its last event took 1 s or more)';
  const took = drill.freshAt - drill.killedAt;
  return took <= drill.freshBudgetMs
    ? null
    : `fresh again +${seconds(took)} after the kill, over its ${seconds(drill.freshBudgetMs)} budget`;
}

/** The check that every drill was fresh again within its budget. */
export function drillBudgetCheck(drills: readonly DrillRecord[]): Check {
  const over = drills.flatMap((d) => {
    const why = overBudget(d);
    return why === null ? [] : [`${d.victim ?? d.target} ${why}`];
  });
  const judged = drills.filter((d) => d.freshAt !== null && d.freshAt !== undefined).length;
  return {
    name: DRILL_BUDGET_CHECK,
    ok: over.length === 0,
    detail:
      over.length === 0
        ? `${judged} of ${drills.length} within budget${judged < drills.length ? ` (${drills.length - judged} with no events after them to judge by)` : ''}`
        : over.join('; '),
  };
}

function seconds(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}
