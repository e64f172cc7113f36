/**
 * Evaluating a dashboard's queries the way Grafana would, against a real Prometheus: Grafana's
 * variables are substituted, each expr is run through the HTTP API, and every metric it names
 * must be one a scrape target exposes right now.
 */
import type { Dashboard, PanelQuery, TemplateVariable } from './dashboard-files.js';

/** Series Prometheus makes itself for every target; no target's metadata lists them. */
const SCRAPE_SERIES = new Set([
  'up',
  'scrape_duration_seconds',
  'scrape_samples_scraped',
  'scrape_samples_post_metric_relabeling',
  'scrape_series_added',
]);
const PROMQL_WORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'and',
  'or',
  'unless',
  'inf',
  'nan',
]);
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];

interface ApiResponse<T> {
  status: 'success' | 'error';
  data: T;
  error?: string;
}

async function api<T>(prometheusUrl: string, path: string, params: Record<string, string | string[]>): Promise<T> {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) for (const one of [value].flat()) query.append(key, one);
  const response = await fetch(`${prometheusUrl}${path}?${query.toString()}`);
  const body = (await response.json()) as ApiResponse<T>;
  if (body.status !== 'success') throw new Error(`Prometheus ${path}: ${body.error ?? response.status}`);
  return body.data;
}

/** Seconds of a Prometheus duration as the targets API prints it: 15s, 1m, 1m30s, 500ms. */
function durationSeconds(text: string): number {
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== text)
    throw new Error(`not a Prometheus duration: ${text}`);
  const unit = { ms: 0.001, s: 1, m: 60, h: 3600 } as const;
  return parts.reduce((sum, [, value, u]) => sum + Number(value) * unit[u as keyof typeof unit], 0);
}

/** The longest scrape interval of the active targets: what Grafana's $__rate_interval is built on. */
export async function scrapeIntervalSeconds(prometheusUrl: string): Promise<number> {
  const data = await api<{ activeTargets: { scrapeInterval: string }[] }>(prometheusUrl, '/api/v1/targets', {
    state: 'active',
  });
  if (data.activeTargets.length === 0) throw new Error('Prometheus has no active scrape targets');
  return Math.max(...data.activeTargets.map((target) => durationSeconds(target.scrapeInterval)));
}

export interface GrafanaTime {
  /** The datasource's timeInterval: Prometheus's scrape interval. */
  scrapeSeconds: number;
  /** The dashboard's time range, for $__range. */
  rangeSeconds: number;
}

/**
 * The expr Grafana sends for an instant query: its interval variables and the dashboard's own
 * variables (at "All": their allValue) replaced. Throws on a variable it does not know.
 */
function expandExpr(expr: string, dashboard: Dashboard, time: GrafanaTime): string {
  const variables = new Map<string, TemplateVariable>(
    dashboard.templating.list.map((variable) => [variable.name, variable]),
  );
  const builtIn = new Map<string, string>(
    Object.entries({
      // Grafana: max(4 × scrape interval, interval + scrape interval); an instant query's interval is at most the scrape interval.
      __rate_interval: `${4 * time.scrapeSeconds}s`,
      __interval: `${time.scrapeSeconds}s`,
      __range: `${Math.ceil(time.rangeSeconds)}s`,
    }),
  );
  return expr.replace(
    /\$\{(\w+)\}|\[\[(\w+)\]\]|\$(\w+)/g,
    (match, braced?: string, bracketed?: string, bare?: string) => {
      const name = braced ?? bracketed ?? bare ?? '';
      const interval = builtIn.get(name);
      if (interval !== undefined) return interval;
      const variable = variables.get(name);
      if (!variable)
        throw new Error(
          `uses ${match}, which is neither a Grafana variable nor one of the dashboard's (${[...variables.keys()].join(', ') || 'none'})`,
        );
      if (!variable.includeAll || variable.allValue === undefined)
        throw new Error(`uses $${name}, which has no "All" value to test with (includeAll and allValue)`);
      return variable.allValue;
    },
  );
}

/**
 * The metric names an expr selects: identifiers left once strings, label matchers, ranges and
 * label lists (by, on, …) are taken out, that are neither functions nor PromQL keywords.
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...bare.matchAll(/(?<![\w:.])[a-zA-Z_:][\w:]*\b(?!\s*\()/g)].map((match) => match[0]);
  return [...new Set(names.filter((name) => !PROMQL_WORDS.has(name.toLowerCase())))];
}

/** Names of every metric the scrape targets expose now, those that have no series yet included (HELP/TYPE lines). */
export async function exposedMetricNames(prometheusUrl: string): Promise<Set<string>> {
  const metadata = await api<Record<string, { type: string }[]>>(prometheusUrl, '/api/v1/metadata', {});
  const names = new Set(SCRAPE_SERIES);
  for (const [name, entries] of Object.entries(metadata)) {
    names.add(name);
    if (entries.some((entry) => entry.type === 'histogram' || entry.type === 'summary'))
      for (const suffix of HISTOGRAM_SUFFIXES) names.add(`${name}${suffix}`);
  }
  return names;
}

/** Series an instant query returns now. */
async function seriesCount(prometheusUrl: string, expr: string): Promise<number> {
  const data = await api<{ resultType: string; result: unknown[] }>(prometheusUrl, '/api/v1/query', { query: expr });
  return data.resultType === 'vector' || data.resultType === 'matrix' ? data.result.length : 1;
}

/** What is wrong with one panel query, or nothing: an unknown variable, an unknown metric, a query error, no series. */
export async function queryProblems(
  prometheusUrl: string,
  query: PanelQuery,
  time: GrafanaTime,
  exposed: Set<string>,
): Promise<string[]> {
  let expr: string;
  try {
    expr = expandExpr(query.target.expr, query.dashboard, time);
  } catch (err) {
    return [`${query.where} ${(err as Error).message}`];
  }
  const unknown = metricNames(expr).filter((name) => !exposed.has(name));
  if (unknown.length > 0) return [`${query.where} queries ${unknown.join(', ')}, which no scrape target exposes`];
  try {
    const count = await seriesCount(prometheusUrl, expr);
    return count > 0 ? [] : [`${query.where} returns no series: ${expr}`];
  } catch (err) {
    return [`${query.where} fails: ${(err as Error).message}`];
  }
}

/**
 * Values of a `label_values(metric, label)` variable, from series seen since `sinceSeconds`
 * (Unix time), so a name from an earlier run does not count.
 */
export async function variableValues(
  prometheusUrl: string,
  variable: TemplateVariable,
  sinceSeconds: number,
): Promise<string[]> {
  const [, selector, label] =
    /^label_values\(\s*([a-zA-Z_:][\w:]*(?:\{[^}]*\})?)\s*,\s*(\w+)\s*\)$/.exec(variable.definition ?? '') ?? [];
  if (selector === undefined || label === undefined)
    throw new Error(
      `variable ${variable.name}: only label_values(metric, label) is supported, got ${variable.definition}`,
    );
  return api<string[]>(prometheusUrl, `/api/v1/label/${label}/values`, {
    'match[]': selector,
    start: String(sinceSeconds),
  });
}
