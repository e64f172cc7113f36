/** Prometheus's ALERTS series over a run, as spans of firing: what the rehearsal tests judge alerts by. */
import type { AlertSpan } from './alerts-of-run.js';

/** The resolution of the queries. */
const STEP_S = 1;

export interface RangeSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

/** A range query at the stack's Prometheus, one sample a second (STEP_S). */
export async function queryRange(
  prometheusUrl: string,
  query: string,
  startS: number,
  endS: number,
): Promise<RangeSeries[]> {
  const params = new URLSearchParams({ query, start: String(startS), end: String(endS), step: String(STEP_S) });
  const response = await fetch(`${prometheusUrl}/api/v1/query_range?${params}`);
  const body = (await response.json()) as { status: string; error?: string; data?: { result: RangeSeries[] } };
  if (body.status !== 'success' || body.data === undefined) {
    throw new Error(`Prometheus query ${query} failed: ${body.error ?? response.status}`);
  }
  return body.data.result;
}

/** Each time a series fired, as a span: its samples cut where one is missing (the alert had resolved). */
export function spansOf(s: RangeSeries): AlertSpan[] {
  const spans: AlertSpan[] = [];
  for (const [t] of s.values) {
    const last = spans.at(-1);
    if (last !== undefined && t * 1000 - last.lastFiringMs <= STEP_S * 1000) last.lastFiringMs = t * 1000;
    else
      spans.push({
        name: s.metric.alertname ?? '?',
        labels: JSON.stringify(s.metric),
        firstFiringMs: t * 1000,
        lastFiringMs: t * 1000,
      });
  }
  return spans;
}
