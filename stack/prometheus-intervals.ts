/**
 * The intervals a running Prometheus really has: read from its own configuration
 * (/api/v1/status/config), not from the settings that wrote it. A stack started by one command with
 * one STACK_PROMETHEUS_INTERVAL_MS keeps it when the next command runs with another, so whatever
 * judges alert timing (the rehearsal's drill promises, the alert tests) reads this.
 */
import { parse } from 'yaml';
import { durationSeconds } from '../monitors/alerts/rule-intervals.js';
import { stackEndpoints, type StackLayout } from './config.js';

/** The global scrape and rule evaluation intervals of the Prometheus at `prometheusUrl`. */
export async function prometheusIntervalsMs(
  prometheusUrl: string,
): Promise<{ scrapeMs: number; evaluationMs: number }> {
  const response = await fetch(`${prometheusUrl}/api/v1/status/config`, { signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`Prometheus's configuration: HTTP ${response.status}`);
  const { yaml } = ((await response.json()) as { data: { yaml: string } }).data;
  const global = (parse(yaml) as { global?: Record<string, unknown> }).global ?? {};
  const interval = (name: string): number => {
    const value = global[name];
    if (typeof value !== 'string') throw new Error(`no global ${name} in Prometheus's configuration`);
    return durationSeconds(value) * 1000;
  };
  return { scrapeMs: interval('scrape_interval'), evaluationMs: interval('evaluation_interval') };
}

/**
 * The stack's Prometheus interval as it runs: the longer of its scrape and evaluation intervals;
 * STACK_PROMETHEUS_INTERVAL_MS when it does not answer (nothing then fires, whatever the interval).
 */
export async function stackPrometheusIntervalMs(layout: StackLayout): Promise<number> {
  try {
    const { scrapeMs, evaluationMs } = await prometheusIntervalsMs(stackEndpoints(layout).prometheusUrl);
    return Math.max(scrapeMs, evaluationMs);
  } catch {
    return layout.settings.prometheusIntervalMs;
  }
}
