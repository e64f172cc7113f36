/**
 * Every rule's timing against every Prometheus the project configures: the native stack's
 * (STACK_PROMETHEUS_INTERVAL_MS's default), docker compose's (compose/prometheus.yml) and
 * Kubernetes' (the ServiceMonitor's interval, the operator's default evaluation interval).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ASSUMED_EVALUATION_INTERVAL, SCRAPE_INTERVAL, serviceMonitor } from '../../../deploy/kubernetes/programs.js';
import { alert } from '../../../monitors/alerts/alert-spec.js';
import { ALL_ALERTS } from '../../../monitors/alerts/catalog.js';
import {
  durationSeconds,
  durationWords,
  intervalProblems,
  type PrometheusTiming,
} from '../../../monitors/alerts/rule-intervals.js';
import { projectRoot, stackSettings } from '../../../stack/config.js';

function timings(): PrometheusTiming[] {
  const stack = Number(stackSettings.settings.prometheusIntervalMs.default) / 1000;
  const compose = parse(readFileSync(join(projectRoot, 'compose', 'prometheus.yml'), 'utf8')) as {
    global: { scrape_interval: string; evaluation_interval: string };
  };
  return [
    { name: 'native stack', scrapeSeconds: stack, evaluationSeconds: stack },
    {
      name: 'docker compose',
      scrapeSeconds: durationSeconds(compose.global.scrape_interval),
      evaluationSeconds: durationSeconds(compose.global.evaluation_interval),
    },
    {
      name: 'Kubernetes',
      scrapeSeconds: durationSeconds(SCRAPE_INTERVAL),
      evaluationSeconds: durationSeconds(ASSUMED_EVALUATION_INTERVAL),
    },
  ];
}

describe("every rule's thresholds account for the scrape and evaluation intervals", () => {
  it.each(timings().map((timing) => [timing.name, timing] as const))('%s', (_name, timing) => {
    const problems = Object.entries(ALL_ALERTS).flatMap(([name, spec]) => intervalProblems(name, spec, timing));
    expect(problems).toEqual([]);
  });

  it('reads the intervals the manifests and the stack really use', () => {
    expect(serviceMonitor().spec.endpoints.map((endpoint) => endpoint.interval)).toEqual([SCRAPE_INTERVAL]);
    expect(timings().map((timing) => timing.scrapeSeconds)).toEqual([15, 15, 15]);
  });
});

describe('intervalProblems', () => {
  const timing: PrometheusTiming = { name: 'test', scrapeSeconds: 15, evaluationSeconds: 15 };
  const rule = (expr: string, extra: { for?: string; staleness?: { minSeconds: number; what: string }[] } = {}) =>
    alert({
      severity: 'warning',
      summary: () => 's',
      rule: { group: 'g', expr, summary: {}, ...extra },
      meaning: 'm',
      steps: ['s'],
    });

  it.each([
    ['a sound gauge rule', rule('up == 0', { for: '1m' }), 0],
    ['for shorter than the evaluation interval', rule('up == 0', { for: '10s' }), 1],
    ['a rate over fewer than 4 scrapes', rule('rate(x_total[30s]) > 0'), 1],
    ['a rate over 4 scrapes', rule('rate(x_total[1m]) > 0'), 0],
    ['an offset shorter than a scrape', rule('x unless x offset 5s'), 1],
    [
      'the old HoldSweeperNoRecentSuccess: time() without a declared staleness',
      rule('time() - max(hold_sweeper_last_success_timestamp_seconds > 0) > 3 * max(hold_sweeper_interval_seconds)'),
      1,
    ],
    [
      'the same with its real threshold declared: 3 × a 1 s sweeper interval',
      rule('time() - max(t > 0) > 3 * max(i)', { staleness: [{ minSeconds: 3, what: '3 × the sweeper interval' }] }),
      1,
    ],
    [
      'a staleness threshold above 2 × scrape + evaluation',
      rule('time() - t > 60', { staleness: [{ minSeconds: 60, what: '60 s' }] }),
      0,
    ],
  ] as const)('%s', (_name, spec, count) => {
    expect(intervalProblems('X', spec, timing)).toHaveLength(count);
  });

  it('parses Prometheus durations', () => {
    expect([durationSeconds('15s'), durationSeconds('1m30s'), durationSeconds('500ms'), durationSeconds('2h')]).toEqual(
      [15, 90, 0.5, 7200],
    );
    expect(() => durationSeconds('15')).toThrow(/not a Prometheus duration/);
  });
});

describe("a summary that says how long the condition has held says its rule's `for`", () => {
  const HELD = /\bfor (\d+ (?:millisecond|second|minute|hour|day|week|year)s?(?: \d+ \w+)*)/;
  const claims = Object.entries(ALL_ALERTS).flatMap(([name, spec]) => {
    if (spec.rule === undefined) return [];
    const text = (spec.summary as (params: unknown) => string)(spec.rule.summary);
    const said = HELD.exec(text)?.[1];
    return said === undefined ? [] : [{ name, said, rule: spec.rule.for }];
  });

  it('finds the summaries that say it (ConsumerHeldByFailure among them)', () => {
    expect(claims.map((claim) => claim.name)).toContain('ConsumerHeldByFailure');
  });

  it.each(claims.map((claim) => [claim.name, claim] as const))('%s', (_name, claim) => {
    expect(claim.rule, 'a summary says "for …" but its rule has no for').toBeDefined();
    expect(claim.said).toBe(durationWords(claim.rule ?? ''));
  });

  it('words a duration as the summaries do', () => {
    expect(['2m', '1m', '1m30s', '15s'].map(durationWords)).toEqual([
      '2 minutes',
      '1 minute',
      '1 minute 30 seconds',
      '15 seconds',
    ]);
  });
});
