/**
 * The top of the HTML report as markup: the verdict and its checks, the crowd's numbers, the
 * drills, the alerts and the per-stage latency table. Every value from the record is escaped.
 */
import {
  recordVerdict,
  type AlertRecord,
  type DrillRecord,
  type RehearsalRecord,
  type StageLatency,
} from '../record.js';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** A moment as the time since the run began (m:ss), negative before it. */
function sinceStart(record: RehearsalRecord, at: number): string {
  const seconds = Math.round((at - record.startedAt) / 1000);
  const whole = Math.abs(seconds);
  return `${seconds < 0 ? '−' : '+'}${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

export function clockTime(at: number): string {
  return `${new Date(at).toISOString().slice(11, 19)} UTC`;
}

const count = (n: number) => n.toLocaleString('en-US');

export function verdictSection(record: RehearsalRecord): string {
  const { ok, headline } = recordVerdict(record);
  const rows = record.checks.map(
    (c) =>
      `<tr class="${c.ok ? 'ok' : 'fail'}"><td class="mark">${c.ok ? 'ok' : 'FAIL'}</td><td>${escapeHtml(c.name)}</td><td>${escapeHtml(c.detail)}</td></tr>`,
  );
  return `<section id="verdict" class="verdict ${ok ? 'ok' : 'fail'}">
  <h2>${escapeHtml(headline)}</h2>
  <table class="checks"><thead><tr><th></th><th>check</th><th>detail</th></tr></thead><tbody>${rows.join('')}</tbody></table>
</section>`;
}

export function crowdSection(record: RehearsalRecord): string {
  const { crowd } = record;
  const perSecond = crowd.seconds > 0 ? Math.round(crowd.buyers / crowd.seconds) : 0;
  const last = record.samples[record.samples.length - 1];
  const figures: [string, string, string?][] = [
    ['buyers', count(crowd.buyers), `in ${crowd.seconds.toFixed(1)} s, ${count(perSecond)}/s`],
    ['confirmed orders', count(crowd.confirmed)],
    ['walked away (hold expired)', count(crowd.abandoned)],
    ['gave seats back', count(crowd.released)],
    ['"seat taken" answers', count(crowd.seatTaken), `${count(crowd.gaveUp)} buyers gave up after 3`],
    [
      'buyer errors',
      count(crowd.errors),
      crowd.errorsDuringDrills > 0 ? `and ${count(crowd.errorsDuringDrills)} during drills (retried)` : undefined,
    ],
    ...(last === undefined
      ? []
      : [
          [
            'seats at the end',
            `${count(last.seats.sold)} sold`,
            `${count(last.seats.held)} held, ${count(last.seats.free)} free`,
          ] as [string, string, string],
        ]),
    ...(last === undefined ? [] : [['outbox rows published', count(last.published)] as [string, string]]),
  ];
  const cards = figures.map(
    ([label, value, note]) =>
      `<div class="figure"><span class="value">${escapeHtml(value)}</span><span class="label">${escapeHtml(label)}</span>${note ? `<span class="note">${escapeHtml(note)}</span>` : ''}</div>`,
  );
  return `<section id="crowd"><h2>The crowd</h2><div class="figures">${cards.join('')}</div></section>`;
}

/** Time to fresh for the drills table: kill → commit → seat availability under 1 s for good (freshAt), of its budget. */
function freshAfter(drill: DrillRecord): string {
  if (drill.freshAt === undefined) return '–';
  if (drill.freshAt === null) return 'no events';
  if (drill.staleAtEnd === true) return 'never (stale until its window closed)';
  const took = `${((drill.freshAt - drill.killedAt) / 1000).toFixed(1)} s`;
  return drill.freshBudgetMs === undefined ? took : `${took} of ${(drill.freshBudgetMs / 1000).toFixed(1)} s`;
}

function drillRow(record: RehearsalRecord, drill: DrillRecord): string {
  const down = drill.backAt === null ? 'never back' : `${((drill.backAt - drill.killedAt) / 1000).toFixed(1)} s`;
  return `<tr class="${drill.verdict.ok ? 'ok' : 'fail'}">
  <td>${escapeHtml(drill.target)}</td>
  <td>${escapeHtml(sinceStart(record, drill.killedAt))}</td>
  <td>${drill.restartedAt === null ? 'never' : escapeHtml(sinceStart(record, drill.restartedAt))}</td>
  <td>${drill.backAt === null ? 'never' : escapeHtml(sinceStart(record, drill.backAt))}</td>
  <td class="num">${escapeHtml(down)}</td>
  <td class="num">${escapeHtml(freshAfter(drill))}</td>
  <td class="num">${escapeHtml(count(drill.peakLag))}</td>
  <td>${drill.alerts.length === 0 ? 'none' : drill.alerts.map(escapeHtml).join(', ')}</td>
  <td><span class="mark">${drill.verdict.ok ? 'ok' : 'FAIL'}</span> ${escapeHtml(drill.verdict.detail)}${(drill.notes ?? []).map((note) => `<div class="note">${escapeHtml(note)}</div>`).join('')}</td>
</tr>`;
}

export function drillsSection(record: RehearsalRecord): string {
  const body =
    record.drills.length === 0
      ? '<p class="empty">No drills in this run.</p>'
      : `<table><thead><tr><th>part killed (-9)</th><th>killed at</th><th>restarted</th><th>healthy again</th><th class="num">down for</th><th class="num">fresh again after</th><th class="num">peak lag (events)</th><th>alerts raised</th><th>nothing lost, doubled or oversold; notes</th></tr></thead>
<tbody>${record.drills.map((d) => drillRow(record, d)).join('')}</tbody></table>`;
  return `<section id="drills"><h2>Drills</h2>${body}</section>`;
}

function alertRow(record: RehearsalRecord, alert: AlertRecord): string {
  const began =
    alert.beganBeforeRun || alert.startsAt < record.startedAt
      ? `before the run (${escapeHtml(sinceStart(record, alert.startsAt))}, ${escapeHtml(clockTime(alert.startsAt))})`
      : escapeHtml(sinceStart(record, alert.startsAt));
  const end = alert.endsAt ?? record.finishedAt;
  return `<tr>
  <td>${escapeHtml(alert.name)}</td>
  <td><span class="severity ${escapeHtml(alert.severity)}">${escapeHtml(alert.severity)}</span></td>
  <td>${began}</td>
  <td>${alert.endsAt === null ? 'still firing at the end' : escapeHtml(sinceStart(record, alert.endsAt))}</td>
  <td class="num">${escapeHtml(`${((end - alert.startsAt) / 1000).toFixed(0)} s`)}${alert.endsAt === null ? '+' : ''}</td>
</tr>`;
}

export function alertsSection(record: RehearsalRecord): string {
  const sorted = [...record.alerts].sort((a, b) => a.startsAt - b.startsAt);
  const body =
    sorted.length === 0
      ? '<p class="empty">No alert was active during the run.</p>'
      : `<table><thead><tr><th>alert</th><th>severity</th><th>began</th><th>ended</th><th class="num">firing for</th></tr></thead>
<tbody>${sorted.map((a) => alertRow(record, a)).join('')}</tbody></table>`;
  return `<section id="alerts"><h2>Alerts active during the run</h2>${body}</section>`;
}

export function stagesSection(stages: StageLatency[]): string {
  const body =
    stages.length === 0
      ? '<p class="empty">No stage latencies were recorded.</p>'
      : `<table><thead><tr><th>consumer</th><th>stage</th><th class="num">p50</th><th class="num">p99</th><th class="num">max</th><th class="num">events</th></tr></thead>
<tbody>${stages.map((s) => `<tr><td>${escapeHtml(s.consumer)}</td><td>${escapeHtml(s.stage)}</td><td class="num">${formatMs(s.p50)}</td><td class="num">${formatMs(s.p99)}</td><td class="num">${formatMs(s.max)}</td><td class="num">${count(s.count)}</td></tr>`).join('')}</tbody></table>`;
  return `<section id="stages"><h2>Where the time goes: commit → Kafka → consumer → effect</h2>${body}</section>`;
}
