/**
 * The Grafana dashboards without Grafana (it cannot run here): their structure and provisioning,
 * then every panel's query evaluated against the native stack's Prometheus while a small rehearsal's
 * consumers, sweeper and monitors are running and scraped. A panel that names a metric no program
 * exposes, or that returns no series, fails the test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../lib/wait.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { requireStack } from '../support/stack.js';
import {
  allPanels,
  dashboardProviderPaths,
  loadDashboards,
  panelQueries,
  provisionedDatasources,
  type PanelQuery,
} from './dashboard-files.js';
import {
  exposedMetricNames,
  metricNames,
  queryProblems,
  scrapeIntervalSeconds,
  variableValues,
  type GrafanaTime,
} from './panel-queries.js';
import { holdRehearsalLock, startRehearsal } from './rehearsal-run.js';

const dashboards = loadDashboards();
const queries = panelQueries(dashboards);
const datasources = provisionedDatasources();
const datasourceUid = datasources[0]?.uid;

describe('the dashboard files', () => {
  it('are the pipeline, slot and jobs dashboards, each with its own uid, on a current schema', () => {
    expect(dashboards.map((d) => d.file)).toEqual(['jobs.json', 'pipeline.json', 'slot.json']);
    expect(new Set(dashboards.map((d) => d.uid)).size).toBe(dashboards.length);
    for (const dashboard of dashboards) {
      expect(dashboard.title, dashboard.file).toMatch(/^Stagefront: /);
      expect(dashboard.schemaVersion, dashboard.file).toBeGreaterThanOrEqual(41); // Grafana 12, the image compose runs
    }
  });

  it('give every panel a unique id, a title, a description and a place on the 24-column grid', () => {
    for (const dashboard of dashboards) {
      const panels = allPanels(dashboard);
      const ids = panels.map((panel) => panel.id);
      expect(new Set(ids).size, `${dashboard.file} panel ids ${ids.join(', ')}`).toBe(ids.length);
      for (const panel of panels.filter((p) => p.type !== 'row')) {
        const where = `${dashboard.file} panel ${panel.id}`;
        expect(panel.title, where).toBeTruthy();
        expect(panel.description, `${where} "${panel.title}"`).toBeTruthy();
        expect(panel.gridPos.x + panel.gridPos.w, `${where} "${panel.title}"`).toBeLessThanOrEqual(24);
        expect(panel.targets?.length, `${where} "${panel.title}" has no query`).toBeGreaterThan(0);
        // Grafana ids of the units used; a custom one is suffix:<text> (Grafana adds the space itself).
        expect(panel.fieldConfig?.defaults?.unit ?? 'short', `${where} "${panel.title}" unit`).toMatch(
          /^(short|s|bytes|Bps|percentunit|suffix:\S.*)$/,
        );
      }
    }
  });

  it('query the provisioned Prometheus datasource by its uid, in every panel, target and variable', () => {
    expect(datasources.map(({ type, uid, url }) => ({ type, uid, url }))).toEqual([
      { type: 'prometheus', uid: 'stagefront-prometheus', url: 'http://prometheus:9090' },
    ]);
    expect(dashboardProviderPaths()).toEqual(['/var/lib/grafana/dashboards']);
    for (const dashboard of dashboards) {
      for (const panel of allPanels(dashboard).filter((p) => p.type !== 'row'))
        expect(panel.datasource?.uid, `${dashboard.file} "${panel.title}"`).toBe(datasourceUid);
      for (const variable of dashboard.templating.list)
        expect(variable.datasource?.uid, `${dashboard.file} $${variable.name}`).toBe(datasourceUid);
    }
    for (const query of queries) {
      expect(query.target.datasource?.uid ?? datasourceUid, query.where).toBe(datasourceUid);
      expect(query.target.expr.trim(), query.where).not.toBe('');
    }
    const refIds = queries.map((q) => `${q.dashboard.file} ${q.panel.id} ${q.target.refId}`);
    expect(new Set(refIds).size).toBe(refIds.length);
  });

  it('finds the metric names in a query (what the live check compares with the scrape targets)', () => {
    expect(metricNames('sum by (consumer, le) (rate(consumer_event_age_seconds_bucket{consumer=~".*"}[60s]))')).toEqual(
      ['consumer_event_age_seconds_bucket'],
    );
    expect(metricNames('count(up{job="consumers"} == 0) or vector(0)')).toEqual(['up']);
    expect(metricNames('a_total * 60 or on (consumer) 0 * sum by (consumer) (b{x="y"}) offset 5m')).toEqual([
      'a_total',
      'b',
    ]);
    expect(metricNames('time() - max(hold_sweeper_last_success_timestamp_seconds > 0) > 1e3')).toEqual([
      'hold_sweeper_last_success_timestamp_seconds',
    ]);
  });
});

describe("every panel query, evaluated by the stack's Prometheus with a small rehearsal's programs running", () => {
  const stack = requireStack();
  installLeakGuard();
  let startedAt = Date.now();
  let time: GrafanaTime;
  let exposed: Set<string>;
  let releaseLock: (() => Promise<void>) | undefined;
  let stopRehearsal: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    releaseLock = track('the rehearsal lock', await holdRehearsalLock(240_000));
    startedAt = Date.now();
    // Natively, without drills, whatever the shell running the tests has set.
    const rehearsal = startRehearsal({
      REHEARSAL_BUYERS: '200',
      REHEARSAL_COUNTDOWN_MS: '1000',
      REHEARSAL_DRILLS: '',
      REHEARSAL_STACK: 'native',
    });
    stopRehearsal = track('the rehearsal and its programs', () => rehearsal.stop());
    // The report first: the queries then see a whole on-sale (every event handled, abandoned holds
    // expired), and no show is left half sold. Its programs keep running after it exits.
    await waitFor(() => rehearsal.child.exitCode !== null || rehearsal.child.signalCode !== null, {
      timeoutMs: 240_000,
      intervalMs: 500,
      description: 'the rehearsal to print its report',
    }).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\nIts output (${rehearsal.logFile}) ends:\n${rehearsal.outputTail()}`);
    });
    const scrapeSeconds = await scrapeIntervalSeconds(stack.prometheusUrl);
    // Polled until every query answers, since the programs come up, handle events and are scraped
    // at their own pace; a panel that cannot work keeps failing, and the timeout lists it.
    let problems: string[] = [];
    try {
      await waitFor(
        async () => {
          time = { scrapeSeconds, rangeSeconds: (Date.now() - startedAt) / 1000 };
          exposed = await exposedMetricNames(stack.prometheusUrl);
          problems = (
            await Promise.all(queries.map((query) => queryProblems(stack.prometheusUrl, query, time, exposed)))
          ).flat();
          return problems.length === 0;
        },
        { timeoutMs: 120_000, intervalMs: 5_000, description: 'every panel query to return series' },
      );
    } catch {
      throw new Error(
        `${problems.length} panel queries do not work:\n  ${problems.join('\n  ')}\n` +
          `The rehearsal exited with ${rehearsal.child.exitCode ?? rehearsal.child.signalCode}; its output (${rehearsal.logFile}) ends:\n${rehearsal.outputTail()}`,
      );
    }
  }, 480_000);

  // The programs first: the lock is what keeps another rehearsal off their ports.
  afterAll(async () => {
    await stopRehearsal?.();
    await releaseLock?.();
  }, 60_000);

  it.each(queries.map((query) => [query.where, query] as [string, PanelQuery]))(
    '%s returns series',
    async (_where, query) => {
      expect(await queryProblems(stack.prometheusUrl, query, time, exposed)).toEqual([]);
    },
  );

  it('fails a query that names a metric no program exposes, or that selects nothing', async () => {
    const query = queries[0];
    if (!query) throw new Error('no panel queries');
    const misspelt = { ...query, target: { ...query.target, expr: 'sum(consumer_lag_recordz)' } };
    expect(await queryProblems(stack.prometheusUrl, misspelt, time, exposed)).toEqual([
      `${query.where} queries consumer_lag_recordz, which no scrape target exposes`,
    ]);
    const nothing = { ...query, target: { ...query.target, expr: 'consumer_lag_records{consumer="nobody"}' } };
    expect((await queryProblems(stack.prometheusUrl, nothing, time, exposed))[0]).toMatch(/returns no series/);
  });

  it("offers values for every dashboard variable (label_values over the rehearsal's series)", async () => {
    for (const dashboard of dashboards) {
      for (const variable of dashboard.templating.list) {
        expect(
          await variableValues(stack.prometheusUrl, variable, Math.floor(startedAt / 1000)),
          `${dashboard.file} $${variable.name}`,
        ).not.toEqual([]);
      }
    }
  });
});
