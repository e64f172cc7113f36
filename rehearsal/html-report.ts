/**
 * The rehearsal's HTML report: one self-contained file with the record embedded as JSON, the summary
 * as tables and the charts drawn by the inline script in html/charts.js. Nothing is fetched: the
 * page's Content-Security-Policy allows no network at all and runs only that one script (by its
 * hash), so text from the record could not run as code even if escaping failed.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { RehearsalRecord } from './record.js';
import {
  alertsSection,
  clockTime,
  crowdSection,
  drillsSection,
  escapeHtml,
  stagesSection,
  verdictSection,
} from './html/summary.js';
import { REPORT_STYLE } from './html/style.js';
import { besideModule } from '../lib/source-tree.js';

let chartScript: string | undefined;

/** Read once, when the first report is rendered: the browser code is a file of its own. */
function chartsScript(): string {
  chartScript ??= readFileSync(besideModule(import.meta.url, 'html', 'charts.js'), 'utf8');
  return chartScript;
}

/** JSON that can sit inside a script element: no "</script>", no HTML comment, no line separators. */
function embeddedJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function chart(id: string, title: string, note: string, extraClass = ''): string {
  return `<figure id="${id}" class="chart ${extraClass}" data-title="${escapeHtml(title)}"><figcaption>${escapeHtml(title)} <span>${escapeHtml(note)}</span></figcaption><div class="legend"></div><div class="plot"></div></figure>`;
}

export function renderHtmlReport(record: RehearsalRecord): string {
  const script = chartsScript();
  const scriptHash = createHash('sha256').update(script, 'utf8').digest('base64');
  const policy = `default-src 'none'; script-src 'sha256-${scriptHash}'; style-src 'unsafe-inline'; img-src data:`;
  const seconds = ((record.finishedAt - record.startedAt) / 1000).toFixed(0);
  const { settings } = record;
  const drills = settings.drills.length === 0 ? 'no drills' : `drills: ${settings.drills.join(', ')}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>On-sale rehearsal ${escapeHtml(record.showId)}</title>
<style>${REPORT_STYLE}</style>
</head>
<body>
<main>
<header>
  <h1>On-sale rehearsal of ${escapeHtml(record.showId)}</h1>
  <p>${escapeHtml(new Date(record.startedAt).toISOString().slice(0, 10))} ${escapeHtml(clockTime(record.startedAt))}, ${escapeHtml(seconds)} s · ${escapeHtml(record.machine)}</p>
  <p>${escapeHtml(`${settings.buyers.toLocaleString('en-US')} buyers, ${settings.concurrency} at a time, sections ${settings.sections}, ${drills}`)}</p>
</header>
${verdictSection(record)}
${crowdSection(record)}
${drillsSection(record)}
${alertsSection(record)}
${stagesSection(record.stages)}
<section id="charts">
<h2>During the run${record.drills.length > 0 ? ' <span class="muted">(red bands: a drill, from the kill until the part answered as healthy again)</span>' : ''}</h2>
${chart('chart-alerts', 'Alert timeline', 'alerts firing at Alertmanager, the Watchdog left out')}
<noscript><p class="empty">The charts are drawn by the page's own script; with scripts off, the tables above are the whole report.</p></noscript>
<div class="grid2">
${chart('chart-latency', 'Commit → effect latency per consumer', 'p50 solid, p99 dashed, per second of handling')}
${chart('chart-throughput', 'Events per second', 'outbox rows published and events handled, between samples')}
${chart('chart-lag', 'Consumer lag', "events published in the consumer's scope and not yet handled")}
${chart('chart-wal', 'Retained WAL of the outbox slot', 'gaps: the slot was missing or unreadable')}
${chart('chart-seats', 'Seats', 'sold, held and free')}
${chart('chart-stages', 'Per-stage latency per consumer', 'medians stacked; black mark: the end-to-end median')}
</div>
</section>
<footer>Rehearsal report generated ${escapeHtml(new Date(record.finishedAt).toISOString())}; the record it was drawn from is embedded in this file (script#record).</footer>
</main>
<script type="application/json" id="record">${embeddedJson(record)}</script>
<script>${script}</script>
</body>
</html>
`;
}
