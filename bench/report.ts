/**
 * The bench's one table: every figure with its baseline measured in the same run (where there is
 * one), their ratio and the target; and the same figures as JSON under .stack/bench/ for
 * comparing runs.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../stack/config.js';

export { percentiles } from '../lib/percentiles.js';

export interface Figure {
  scenario: string;
  measure: string;
  value: number;
  unit: string;
  /** Measured in the same run, on the same input. */
  baseline?: { label: string; value: number };
  target?: string;
  /** Shown instead of the value (e.g. "p50 12 · p99 80 · max 150 ms"); `value` stays the figure compared. */
  display?: string;
  /** Latency percentiles in ms, kept in the JSON. */
  percentiles?: { p50: number; p99: number; max: number; count: number };
}

export interface Report {
  startedAt: string;
  scale: string;
  machine: string;
  figures: Figure[];
  notes: string[];
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  return value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(value >= 10 ? 1 : 2);
}

/** Two significant digits at most, so a small ratio (a latency 50 times lower) does not print as 0.0x. */
function formatRatio(ratio: number): string {
  return `${ratio >= 10 ? ratio.toFixed(0) : ratio >= 0.1 ? ratio.toFixed(1) : ratio.toPrecision(2)}x`;
}

export function renderTable(report: Report): string {
  const header = ['measure', 'value', 'baseline', 'ratio', 'target'];
  const rows = report.figures.map((f) => [
    `${f.scenario}: ${f.measure}`,
    f.display ?? `${formatNumber(f.value)} ${f.unit}`,
    f.baseline === undefined ? '' : `${formatNumber(f.baseline.value)} ${f.unit} (${f.baseline.label})`,
    f.baseline === undefined || f.baseline.value === 0 ? '' : formatRatio(f.value / f.baseline.value),
    f.target ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  const lines = [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
  const notes = report.notes.map((n, i) => `${i + 1}. ${n}`);
  return [`bench ${report.startedAt}, scale ${report.scale}, ${report.machine}`, '', ...lines, '', ...notes].join('\n');
}

/** Writes the report as .stack/bench/<timestamp>.json; returns the path. */
export function writeReport(report: Report): string {
  const folder = join(projectRoot, '.stack', 'bench');
  mkdirSync(folder, { recursive: true });
  const file = join(folder, `${report.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
