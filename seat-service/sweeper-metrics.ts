/** The hold sweeper's Prometheus metrics, fed by its run events, on the program's own registry. */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { SweepRun } from './sweeper.js';

export function registerSweeperMetrics(registry: Registry, intervalMs: number): (run: SweepRun) => void {
  const registers = [registry];
  const runs = new Counter({
    name: 'hold_sweeper_runs_total',
    help: 'Run slots by outcome: succeeded, failed, claimed_elsewhere (another sweeper had it), claim_failed (database unreachable).',
    labelNames: ['outcome'] as const,
    registers,
  });
  const expired = new Counter({
    name: 'hold_sweeper_expired_holds_total',
    help: 'Holds this process expired.',
    registers,
  });
  const lastSuccess = new Gauge({
    name: 'hold_sweeper_last_success_timestamp_seconds',
    help: 'Unix time this process last finished a run successfully.',
    registers,
  });
  const duration = new Histogram({
    name: 'hold_sweeper_run_duration_seconds',
    help: 'Time one run slot took (claim, expiry batches, stamp).',
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers,
  });
  const interval = new Gauge({
    name: 'hold_sweeper_interval_seconds',
    help: 'The configured run interval.',
    registers,
  });
  interval.set(intervalMs / 1000);
  for (const outcome of ['succeeded', 'failed', 'claimed_elsewhere', 'claim_failed']) runs.inc({ outcome }, 0);
  return (run) => {
    runs.inc({ outcome: run.outcome });
    expired.inc(run.expired);
    duration.observe(run.durationMs / 1000);
    if (run.outcome === 'succeeded') lastSuccess.set(Date.now() / 1000);
  };
}
