/**
 * The text report: what the crowd did, how fast events reached each consumer, each drill, every
 * check, and the alerts active during the run. Written from the record (plus a few figures the
 * record does not keep), so the text, the JSON and the HTML tell the same story.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { projectRoot } from '../stack/config.js';
import { renderHtmlReport } from './html-report.js';
import { recordVerdict, type AlertRecord, type DrillRecord, type RehearsalRecord } from './record.js';

export interface ReportExtras {
  mode: 'native' | 'external';
  holdLatencyMs: { p50: number; p99: number };
  latency: { consumer: string; p50: number; p99: number; max: number }[];
  /** Alerts that were active only while the rehearsal started its programs, and why they are left out. */
  leftOut: { alerts: AlertRecord[]; reason: string };
  /** Alertmanager unanswered polls, if any. */
  alertGaps: string | undefined;
  /** Samples not taken because a database did not answer. */
  missedSamples: number;
  logFiles: string[];
}

const time = (ms: number) => new Date(ms).toISOString().slice(11, 19);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function alertLine(alert: AlertRecord): string {
  const began = `began ${time(alert.startsAt)}${alert.beganBeforeRun ? ' (before the run)' : ''}`;
  const ended = alert.endsAt === null ? 'still active at the end' : `ended ${time(alert.endsAt)}`;
  return `    ${alert.name.padEnd(34)} ${(alert.severity || '-').padEnd(9)} ${began}, ${ended}`;
}

/**
 * A drill's time to fresh, in words: from the kill until commit → seat availability stayed under
 * 1 s (freshAt); nothing for a record written before it was kept.
 */
function freshText(drill: DrillRecord, before = ''): string {
  if (drill.freshAt === undefined) return '';
  if (drill.freshAt === null) return `${before}fresh: no seat availability event to judge by`;
  if (drill.staleAtEnd === true) return `${before}never fresh again before the next drill or the end`;
  const budget = drill.freshBudgetMs === undefined ? '' : ` (budget ${seconds(drill.freshBudgetMs)})`;
  return `${before}fresh again +${seconds(drill.freshAt - drill.killedAt)}${budget}`;
}

function drillLines(record: RehearsalRecord): string[] {
  if (record.drills.length === 0) return [];
  const lines = ['', '  drills (killed with -9, started again):'];
  for (const d of record.drills) {
    const restarted = d.restartedAt === null ? 'never restarted' : `restarted +${seconds(d.restartedAt - d.killedAt)}`;
    const back = d.backAt === null ? 'NOT BACK' : `back +${seconds(d.backAt - d.killedAt)}`;
    const caughtUp =
      d.caughtUpAt === undefined || d.caughtUpAt === null ? '' : `, caught up +${seconds(d.caughtUpAt - d.killedAt)}`;
    lines.push(
      `    ${d.target.padEnd(9)} killed ${time(d.killedAt)}, ${restarted}, ${back}${caughtUp}${freshText(d, ', ')}; peak lag ${d.peakLag} events; alerts: ${d.alerts.length === 0 ? 'none' : d.alerts.join(', ')}`,
    );
    lines.push(`      ${d.verdict.ok ? 'ok  ' : 'FAIL'}  ${d.verdict.detail}`);
    for (const note of d.notes ?? []) lines.push(`      note: ${note}`);
  }
  return lines;
}

function stageLines(record: RehearsalRecord): string[] {
  if (record.stages.length === 0) return [];
  return [
    '',
    '  where the time goes (per consumer and stage):',
    ...record.stages.map(
      (s) =>
        `    ${s.consumer.padEnd(19)} ${s.stage.padEnd(44)} p50 ${Math.round(s.p50)} ms, p99 ${Math.round(s.p99)} ms, max ${Math.round(s.max)} ms (${s.count})`,
    ),
  ];
}

/** The run's verdict under its checks: the same headline as the HTML report's. */
function verdictLine(record: RehearsalRecord): string {
  const { ok, headline } = recordVerdict(record);
  return `  ${ok ? 'PASS' : 'FAIL'}: ${headline}`;
}

export function renderTextReport(record: RehearsalRecord, extras: ReportExtras): string {
  const { crowd } = record;
  const drills = record.settings.drills.length === 0 ? 'no drills' : `drills: ${record.settings.drills.join(', ')}`;
  const lines = [
    '',
    `On-sale rehearsal of ${record.showId} (${extras.mode} stack, ${drills})`,
    `  buyers                 ${crowd.buyers} in ${crowd.seconds.toFixed(1)} s (${Math.round(crowd.buyers / Math.max(crowd.seconds, 0.001))} buyers/s)`,
    `  confirmed orders       ${crowd.confirmed}`,
    `  walked away (expired)  ${crowd.abandoned}`,
    `  gave seats back        ${crowd.released}`,
    `  "seat taken" answers   ${crowd.seatTaken} (buyers who gave up after 3: ${crowd.gaveUp})`,
    `  errors buyers saw      ${crowd.errors} outside drills, ${crowd.errorsDuringDrills} during drills (each retried)`,
    `  hold latency           p50 ${extras.holdLatencyMs.p50} ms, p99 ${extras.holdLatencyMs.p99} ms`,
    ...extras.latency.map(
      (l) => `  commit → ${l.consumer.padEnd(19)} p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms`,
    ),
    ...stageLines(record),
    ...drillLines(record),
    '',
    ...record.checks.map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.name}: ${c.detail}`),
    verdictLine(record),
    '',
    record.alerts.length === 0
      ? '  alerts active during the run: none'
      : `  alerts active during the run (${record.alerts.length}):`,
    ...record.alerts.map(alertLine),
  ];
  if (extras.leftOut.alerts.length > 0) {
    lines.push(
      `  left out: ${[...new Set(extras.leftOut.alerts.map((a) => a.name))].join(', ')} (${extras.leftOut.reason})`,
    );
  }
  if (extras.alertGaps !== undefined) lines.push(`  note: ${extras.alertGaps}; alerts of those seconds are unknown`);
  if (extras.missedSamples > 0)
    lines.push(`  note: ${extras.missedSamples} samples not taken (a database did not answer)`);
  if (extras.logFiles.length > 0) lines.push(`  logs: ${extras.logFiles.join(', ')}`);
  if (extras.mode === 'native') lines.push('  the stack keeps running: npm run stack -- status | stop');
  return `${lines.join('\n')}\n`;
}

export interface WrittenReport {
  text: string;
  json: string;
  html: string;
}

/** rehearsal-<show>.txt, .json and .html in `dir` (relative to the project root unless absolute). */
export function writeReport(dir: string, record: RehearsalRecord, text: string): WrittenReport {
  const folder = isAbsolute(dir) ? dir : join(projectRoot, dir);
  mkdirSync(folder, { recursive: true });
  const base = join(folder, `rehearsal-${record.showId}`);
  const paths = { text: `${base}.txt`, json: `${base}.json`, html: `${base}.html` };
  writeFileSync(paths.text, text);
  writeFileSync(paths.json, `${JSON.stringify(record, null, 2)}\n`);
  writeFileSync(paths.html, renderHtmlReport(record));
  return paths;
}

/** A path as the user reads it: relative to the project root when inside it. */
export function shownPath(path: string): string {
  const inside = relative(projectRoot, path);
  return inside.startsWith('..') || isAbsolute(inside) ? path : inside;
}
