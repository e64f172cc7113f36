import type { Pool } from '../lib/postgres.js';
import { availabilityCheck, emailCheck, latencies, ledgerCheck, oversoldCheck, type Check } from './consistency.js';
import type { CrowdOutcome } from './crowd.js';
import type { MailSink } from './mail-sink.js';
import type { RunningProgram } from './programs.js';

export interface ReportInput {
  showId: string;
  crowd: CrowdOutcome;
  crowdMs: number;
  drained: { consumer: string; published: number; handled: number }[];
  seatPool: Pool;
  consumerPool: Pool;
  mail: MailSink;
  programs: RunningProgram[];
  since: Date;
  alertmanagerUrl: string;
}

/** Names of the alerts that started firing at Alertmanager during the run, the Watchdog heartbeats left out. */
async function alertsRaisedSince(alertmanagerUrl: string, since: Date): Promise<string> {
  try {
    const response = await fetch(`${alertmanagerUrl}/api/v2/alerts?active=true&silenced=false&inhibited=false`, { signal: AbortSignal.timeout(3000) });
    const alerts = (await response.json()) as { labels: Record<string, string>; startsAt: string }[];
    const names = alerts
      .filter((a) => new Date(a.startsAt) >= since)
      .map((a) => a.labels.alertname ?? '?')
      .filter((name) => name !== 'Watchdog');
    return names.length === 0 ? 'none' : [...new Set(names)].join(', ');
  } catch (err) {
    return `Alertmanager did not answer (${err instanceof Error ? err.message : String(err)})`;
  }
}

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
}

/** Prints what happened and whether every promise held; 0 when all checks pass. */
export async function printReport(input: ReportInput): Promise<number> {
  const { crowd } = input;
  const checks: Check[] = [
    await oversoldCheck(input.seatPool),
    ...input.drained.map((d) => ({ name: `${d.consumer} handled every event once`, ok: d.handled === d.published, detail: `${d.handled} of ${d.published}` })),
    await availabilityCheck(input.seatPool, input.consumerPool, input.showId),
    await ledgerCheck(input.seatPool, input.consumerPool),
    await emailCheck(input.seatPool, input.mail.messageIds, input.since),
    { name: 'no buyer saw an error', ok: crowd.errors.length === 0, detail: crowd.errors.slice(0, 3).join('; ') || 'none' },
  ];
  const lines = [
    '',
    `On-sale rehearsal of ${input.showId}`,
    `  buyers                 ${crowd.buyers} in ${(input.crowdMs / 1000).toFixed(1)} s (${Math.round((crowd.buyers * 1000) / input.crowdMs)} buyers/s)`,
    `  confirmed orders       ${crowd.confirmed}`,
    `  walked away (expired)  ${crowd.abandoned}`,
    `  gave seats back        ${crowd.released}`,
    `  "seat taken" answers   ${crowd.seatTaken} (buyers who gave up after 3: ${crowd.gaveUp})`,
    `  hold latency           p50 ${percentile(crowd.holdLatenciesMs, 0.5)} ms, p99 ${percentile(crowd.holdLatenciesMs, 0.99)} ms`,
    ...(await latencies(input.seatPool, input.consumerPool, input.since)).map((l) => `  commit → ${l.consumer.padEnd(19)} p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms`),
    '',
    ...checks.map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.name}: ${c.detail}`),
    '',
    `  alerts raised during the run: ${await alertsRaisedSince(input.alertmanagerUrl, input.since)}`,
    `  logs: ${input.programs.map((p) => p.logFile).join(', ')}`,
    '  the stack keeps running: npm run stack -- status | stop',
  ];
  console.log(lines.join('\n'));
  return checks.every((c) => c.ok) ? 0 : 1;
}
