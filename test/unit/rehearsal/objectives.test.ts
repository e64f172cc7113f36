/**
 * The rehearsal's freshness objectives, judged from events' times: the availability pages' p99
 * outside drills, every email within its deadline, and each drill fresh again within its budget.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  blame,
  DRILL_BUDGET_CHECK,
  DRILL_FRESH_BUDGET_MS,
  drillBudgetCheck,
  drillFreshBudgetMs,
  FRESHNESS_OBJECTIVES,
  MIN_EVENTS_FOR_P99,
  objectiveCheckName,
  objectiveChecks,
  overBudget,
  slowestStage,
} from '../../../rehearsal/objectives.js';
import type { DrillRecord } from '../../../rehearsal/record.js';
import type { EventTimes } from '../../../rehearsal/stages.js';

const T0 = 1_800_000_000_000;

/** An event committed at `at` that spent `toKafka` ms reaching Kafka and `toConsumer` more reaching the consumer. */
function event(consumer: string, at: number, toKafka: number, toConsumer: number, toEmail?: number): EventTimes {
  const appended = at + toKafka;
  const received = appended + toConsumer;
  return {
    consumer,
    eventId: `${consumer}-${at}-${toKafka}-${toConsumer}`,
    created: at,
    appended,
    received,
    completed: toEmail === undefined ? null : received + toEmail,
  };
}

/** `n` availability events a second apart from T0, each `ms` end to end. */
function steady(n: number, ms: number): EventTimes[] {
  return Array.from({ length: n }, (_, i) => event('seat-availability', T0 + i * 1_000, ms / 2, ms / 2));
}

const availability = FRESHNESS_OBJECTIVES.find((o) => o.consumer === 'seat-availability')!;
const email = FRESHNESS_OBJECTIVES.find((o) => o.consumer === 'confirmation-email')!;
const checkOf = (events: EventTimes[], drills: Parameters<typeof objectiveChecks>[1] = []) =>
  objectiveChecks(events, drills).find((c) => c.name === objectiveCheckName(availability))!;

describe('the freshness objectives', () => {
  it('name what they promise', () => {
    expect(objectiveCheckName(availability)).toBe('commit → seat availability p99 within 1 s outside drills');
    expect(objectiveCheckName(email)).toBe('commit → confirmation email accepted every event within 30 min');
  });

  it('pass a run whose availability p99 is under 1 s', () => {
    const check = checkOf(steady(1_000, 200));
    expect(check.ok).toBe(true);
    expect(check.detail).toBe('p99 0.20 s over 1000 events');
  });

  it('do not judge a p99 over fewer than 1,000 events, and say so', () => {
    const few = [...steady(990, 200), ...[0, 1].map((i) => event('seat-availability', T0 + 2_000_000 + i, 5_000, 100))];
    expect(checkOf(few)).toMatchObject({
      ok: true,
      detail: `p99 0.20 s over 992 events: too few to judge a p99 (fewer than ${MIN_EVENTS_FOR_P99})`,
    });
    const enough = [...few, ...steady(8, 200).map((e) => ({ ...e, eventId: `${e.eventId}-more` }))];
    expect(checkOf(enough).ok).toBe(true);
  });

  it('fail a run in which more than 1 % of availability events took over 1 s, naming the step and the drill', () => {
    const events = [
      ...steady(1_000, 200),
      ...Array.from({ length: 11 }, (_, i) => event('seat-availability', T0 + 2_000_000 + i, 90_000, 200)),
    ];
    const check = checkOf(events, [{ target: 'connect', killedAt: T0 + 1_500_000, freshBudgetMs: 35_000 }]);
    expect(check.ok).toBe(false);
    expect(check.detail).toBe(
      "p99 90.2 s over 1011 events outside drills (0 within a drill's budget left out); 11 slower than 1.00 s, most of it in commit → Kafka (Debezium, Connect, broker); 11 of them after the connect drill",
    );
  });

  it('leave out the events that arrived within a drill’s budget, and only those', () => {
    const killedAt = T0 + 2_000_000;
    const during = [0, 1, 2].map((i) => event('seat-availability', killedAt + i * 1_000, 10_000, 500));
    const spans = [{ target: 'consumer' as const, killedAt, freshBudgetMs: 25_000 }];
    const within = checkOf([...steady(1_000, 200), ...during], spans);
    expect(within.ok).toBe(true);
    expect(within.detail).toBe("p99 0.20 s over 1000 events outside drills (3 within a drill's budget left out)");
    // The same lateness after the budget counts.
    const after = Array.from({ length: 11 }, (_, i) => event('seat-availability', killedAt + 20_000 + i, 10_000, 500));
    expect(checkOf([...steady(1_000, 200), ...after], spans).ok).toBe(false);
  });

  it('judge every email against its deadline, drills or not', () => {
    const onTime = event('confirmation-email', T0, 300, 100, 29 * 60_000);
    const late = event('confirmation-email', T0 + 1, 300, 100, 31 * 60_000);
    const name = objectiveCheckName(email);
    const spans = [{ target: 'consumer' as const, killedAt: T0 - 1, freshBudgetMs: 3_600_000 }];
    expect(objectiveChecks([onTime], spans).find((c) => c.name === name)!.ok).toBe(true);
    const failing = objectiveChecks([onTime, late], spans).find((c) => c.name === name)!;
    expect(failing.ok).toBe(false);
    expect(failing.detail).toContain('most of it in consumer → email accepted (SMTP)');
  });

  it('fail an email taken by the consumer and never accepted, however soon it was taken', () => {
    const accepted = event('confirmation-email', T0, 300, 100, 500);
    const claimedOnly = event('confirmation-email', T0 + 1, 300, 100);
    const check = objectiveChecks([accepted, claimedOnly], []).find((c) => c.name === objectiveCheckName(email))!;
    expect(check).toMatchObject({
      ok: false,
      detail: '1 of 2 events taken and never completed (confirmation email accepted)',
    });
  });

  it('have nothing to judge without events, and say so', () => {
    expect(checkOf([])).toEqual({
      name: objectiveCheckName(availability),
      ok: true,
      detail: 'no seat-availability events to judge',
    });
  });
});

describe('where slow events lost their time', () => {
  it('names the step with the most time summed, and the drill most of them arrived after', () => {
    const slow = [
      event('seat-availability', T0 + 10_000, 100, 30_000),
      event('seat-availability', T0 + 40_000, 100, 30_000),
      event('seat-availability', T0 + 41_000, 20_000, 100),
    ];
    expect(slowestStage(slow)).toBe('Kafka → consumer (fetch, decode, inbox)');
    const drills = [
      { target: 'consumer' as const, killedAt: T0 + 30_000 },
      { target: 'kafka' as const, killedAt: T0 + 65_000 },
    ];
    expect(blame(slow, drills)).toBe(
      ', most of it in Kafka → consumer (fetch, decode, inbox); 2 of them after the consumer drill',
    );
    expect(blame(slow, [])).toContain('; 3 of them before any drill');
    expect(blame([], drills)).toBe('');
  });
});

describe('each drill’s budget', () => {
  it('is its target’s plus the time the part was left down', () => {
    expect(drillFreshBudgetMs('consumer', 2_000)).toBe(22_000);
    expect(drillFreshBudgetMs('connect', 5_000)).toBe(35_000);
  });

  const drill = (freshAfter: number | null, budget: number): DrillRecord => ({
    target: 'connect',
    victim: 'connect',
    killedAt: T0,
    restartedAt: T0 + 2_000,
    backAt: T0 + 10_000,
    freshAt: freshAfter === null ? null : T0 + freshAfter,
    freshBudgetMs: budget,
    peakLag: 0,
    alerts: [],
    verdict: { ok: true, detail: '' },
    notes: [],
  });

  it('holds up to and at the budget, and fails past it', () => {
    expect(overBudget(drill(35_000, 35_000))).toBeNull();
    expect(overBudget(drill(35_001, 35_000))).toBe('fresh again +35.0 s after the kill, over its 35.0 s budget');
    expect(overBudget(drill(null, 35_000))).toBeNull();
  });

  it('fails a drill whose window closed still stale, however soon its last slow event came', () => {
    expect(overBudget({ ...drill(9_000, 35_000), staleAtEnd: true })).toBe(
      'never fresh again before the next drill or the end of the run (its last event took 1 s or more)',
    );
    expect(drillBudgetCheck([{ ...drill(9_000, 35_000), victim: 'kafka', staleAtEnd: true }]).ok).toBe(false);
  });

  it('makes one check of every drill', () => {
    expect(drillBudgetCheck([drill(9_000, 22_000), drill(null, 35_000)])).toEqual({
      name: DRILL_BUDGET_CHECK,
      ok: true,
      detail: '1 of 2 within budget (1 with no events after them to judge by)',
    });
    const failing = drillBudgetCheck([drill(9_000, 22_000), { ...drill(59_000, 35_000), victim: 'connect' }]);
    expect(failing.ok).toBe(false);
    expect(failing.detail).toBe('connect fresh again +59.0 s after the kill, over its 35.0 s budget');
  });
});

describe('docs/rehearsal.md', () => {
  const doc = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../../docs/rehearsal.md'), 'utf8');

  it('lists every freshness check by the name the report gives it', () => {
    for (const name of [...FRESHNESS_OBJECTIVES.map(objectiveCheckName), DRILL_BUDGET_CHECK])
      expect(doc).toContain(`\n| ${name} | `);
  });

  it('gives every drill the budget the verdict judges it by', () => {
    for (const [target, ms] of Object.entries(DRILL_FRESH_BUDGET_MS))
      expect(doc).toContain(`\n| \`${target}\` | ${ms / 1000} s |`);
  });
});
