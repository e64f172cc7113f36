import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../rehearsal/html-report.js';
import type { RehearsalRecord } from '../../rehearsal/record.js';
import { stackLayout } from '../../stack/config.js';
import { CHROMIUM_HINT, chromiumCommand, openPage, type OpenPage } from '../support/chromium.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { fixtureRecord } from './fixtures/report-fixture.js';

const fixture = fixtureRecord();
const CHARTS = [
  'chart-alerts',
  'chart-latency',
  'chart-throughput',
  'chart-lag',
  'chart-wal',
  'chart-seats',
  'chart-stages',
];
const VIEWPORT = { width: 1400, height: 2400 };

/** Kept after the run: the reports and their screenshots, to look at. */
const artifacts = join(stackLayout().home, 'test-artifacts');

function writeReport(name: string, record: RehearsalRecord): string {
  mkdirSync(artifacts, { recursive: true });
  const file = join(artifacts, `${name}.html`);
  writeFileSync(file, renderHtmlReport(record));
  return file;
}

async function withPage<T>(file: string, use: (page: OpenPage) => Promise<T>): Promise<T> {
  const page = await openPage(file, VIEWPORT);
  const close = track('headless Chromium', () => page.close());
  try {
    return await use(page);
  } finally {
    await close();
  }
}

interface ChartState {
  id: string;
  drawn: string | null;
  /** Lines with at least two points, single points, bars. */
  plotted: number;
  drillLabels: string[];
}

async function chartStates(page: OpenPage): Promise<ChartState[]> {
  return page.evaluate<ChartState[]>(`[...document.querySelectorAll('figure.chart')].map((figure) => ({
    id: figure.id,
    drawn: figure.dataset.drawn ?? null,
    plotted: [...figure.querySelectorAll('svg .series')].filter((el) =>
      el.tagName === 'path' ? /L/.test(el.getAttribute('d') ?? '') : el.tagName === 'circle' || Number(el.getAttribute('width')) > 0).length,
    drillLabels: [...figure.querySelectorAll('svg .drill-label')].map((label) => label.textContent),
  }))`);
}

/** What a reader would find wrong: charts that did not draw, errors in the console, anything fetched. */
async function pageProblems(page: OpenPage): Promise<string[]> {
  const states = await chartStates(page);
  const fetched = await page.evaluate<number>(`performance.getEntriesByType('resource').length`);
  return [
    ...CHARTS.filter((id) => !states.some((s) => s.id === id)).map((id) => `no chart container #${id}`),
    ...states
      .filter((s) => s.drawn !== 'yes' || s.plotted === 0)
      .map((s) => `#${s.id} not drawn (drawn=${s.drawn}, ${s.plotted} plotted)`),
    ...page.errors.map((e) => `console: ${e}`),
    ...page.requests.map((url) => `fetched ${url}`),
    ...(fetched > 0 ? [`${fetched} resources loaded`] : []),
  ];
}

installLeakGuard();

describe('HTML report in headless Chromium', () => {
  beforeAll(() => {
    // Nothing is skipped: without a browser the test fails and says how to get one.
    if (chromiumCommand() === undefined) throw new Error(`Chromium not found: ${CHROMIUM_HINT}`);
  });

  it('draws every chart from the fixture record with no console errors and nothing fetched; keeps a screenshot', async () => {
    const file = writeReport('rehearsal-report', fixture);
    const screenshot = join(artifacts, 'rehearsal-report.png');
    await withPage(file, async (page) => {
      expect(await pageProblems(page)).toEqual([]);
      const states = await chartStates(page);
      expect(states.map((s) => s.id).sort()).toEqual([...CHARTS].sort());
      // Every time chart marks both drills; the latency chart has p50 and p99 per consumer.
      for (const state of states.filter((s) => s.id !== 'chart-stages'))
        expect(state.drillLabels).toEqual(['✕ connect', '✕ consumer']);
      expect(states.find((s) => s.id === 'chart-latency')!.plotted).toBeGreaterThanOrEqual(6);
      expect(states.find((s) => s.id === 'chart-alerts')!.plotted).toBe(fixture.alerts.length);

      const summary = await page.evaluate<{
        verdict: string;
        drills: string[];
        crowd: string;
        alerts: string[];
        stages: number;
        legend: string[];
      }>(`({
        verdict: document.querySelector('#verdict h2').textContent,
        drills: [...document.querySelectorAll('#drills tbody tr')].map((tr) => tr.innerText.replace(/\\s+/g, ' ').trim()),
        crowd: document.querySelector('#crowd').innerText.replace(/\\s+/g, ' '),
        alerts: [...document.querySelectorAll('#alerts tbody tr')].map((tr) => tr.textContent.replace(/\\s+/g, ' ').trim()),
        stages: document.querySelectorAll('#stages tbody tr').length,
        legend: [...document.querySelectorAll('#chart-lag .legend .key')].map((key) => key.textContent),
      })`);
      expect(summary.verdict).toBe('All 8 checks passed, 2 drills held');
      expect(summary.drills).toEqual([
        'connect +0:25 +0:27 +0:42 16.4 s 24.3 s 5,095 ConsumerLagGrowing, ConsumerEventAgeHigh ok nothing lost, doubled or oversold the connector task was restarted once Connect answered',
        'consumer +0:56 +0:57 +1:03 7.4 s no events 586 ConsumerDown ok confirmation-email: every event handled once after its restart',
      ]);
      expect(summary.crowd).toContain('0 buyer errors and 4 during drills (retried)');
      expect(summary.alerts[0]).toMatch(/^SlotLost critical before the run \(−1:15, 08:58:45 UTC\)/);
      expect(summary.alerts).toHaveLength(fixture.alerts.length);
      expect(summary.stages).toBe(fixture.stages.length);
      expect(summary.legend).toEqual(['seat-availability', 'confirmation-email', 'sales-ledger']);
      await page.screenshot(screenshot);
      // Pointing at the lag chart 40 s into the run shows every consumer's lag at that moment.
      const tip = await page.evaluate<string>(`(() => {
        const area = document.querySelector('#chart-lag svg rect[fill="transparent"]');
        const box = area.getBoundingClientRect();
        area.dispatchEvent(new MouseEvent('mousemove', { bubbles: true, clientX: box.left + box.width * 40 / ${(fixture.finishedAt - fixture.startedAt) / 1000}, clientY: box.top + 10 }));
        return document.querySelector('#chart-lag .tip').innerText;
      })()`);
      const at40 = fixture.samples.find((s) => s.at - fixture.startedAt >= 39_500)!;
      expect(tip.split('\n')).toEqual([
        '0:40',
        ...at40.consumers.map((c) => `${c.consumer}: ${c.lag.toLocaleString('en-US')}`),
      ]);
    });
    const png = readFileSync(screenshot);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(statSync(screenshot).size).toBeGreaterThan(50_000);
  });

  it('shows text from the record as text: markup in alert names and details neither renders nor runs', async () => {
    const hostile: RehearsalRecord = {
      ...fixture,
      showId: 'show<b>bold</b>',
      alerts: [{ ...fixture.alerts[0]!, name: '<img src=x onerror="window.pwned=1">' }, ...fixture.alerts.slice(1)],
      checks: [
        { name: 'check & "quote"', ok: true, detail: '</script><script>window.pwned=2</script>' },
        ...fixture.checks.slice(1),
      ],
      drills: [{ ...fixture.drills[0]!, target: '<svg onload="window.pwned=3">' }, ...fixture.drills.slice(1)],
    };
    const html = renderHtmlReport(hostile);
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<script>window.pwned');
    await withPage(writeReport('rehearsal-report-hostile', hostile), async (page) => {
      expect(await pageProblems(page)).toEqual([]);
      const seen = await page.evaluate<{
        pwned: unknown;
        images: number;
        bold: number;
        alert: string;
        detail: string;
        title: string;
        drillLabel: string;
      }>(`({
        pwned: window.pwned ?? null,
        images: document.querySelectorAll('img').length,
        bold: document.querySelectorAll('b').length,
        alert: document.querySelector('#alerts tbody td').textContent,
        detail: document.querySelector('#verdict tbody td:last-child').textContent,
        title: document.title,
        drillLabel: document.querySelector('#chart-lag .drill-label').textContent,
      })`);
      expect(seen).toEqual({
        pwned: null,
        images: 0,
        bold: 0,
        alert: '<img src=x onerror="window.pwned=1">',
        detail: '</script><script>window.pwned=2</script>',
        title: 'On-sale rehearsal show<b>bold</b>',
        drillLabel: '✕ <svg onload="window.pwned=3">',
      });
    });
  });

  it('says so when a run has no samples, alerts, drills or stages, without errors', async () => {
    const empty: RehearsalRecord = {
      ...fixture,
      samples: [],
      latency: [],
      stages: [],
      drills: [],
      alerts: [],
      settings: { ...fixture.settings, drills: [] },
    };
    await withPage(writeReport('rehearsal-report-empty', empty), async (page) => {
      expect(page.errors).toEqual([]);
      const states = await chartStates(page);
      expect(Object.fromEntries(states.map((s) => [s.id, s.drawn]))).toEqual(
        Object.fromEntries(CHARTS.map((id) => [id, 'empty'])),
      );
      const notes = await page.evaluate<string[]>(
        `[...document.querySelectorAll('.no-data, .empty')].map((p) => p.textContent)`,
      );
      expect(notes).toContain('No alert fired during the run.');
      expect(notes).toContain('No drills in this run.');
    });
  });

  it('finds a chart that did not draw and a script error: a record the charts cannot read', async () => {
    // One sample without its seats: the seats chart throws, the others still draw.
    const broken = {
      ...fixture,
      samples: fixture.samples.map((s, i) => (i === 10 ? { ...s, seats: null } : s)),
    } as unknown as RehearsalRecord;
    await withPage(writeReport('rehearsal-report-broken', broken), async (page) => {
      const problems = await pageProblems(page);
      expect(problems).toHaveLength(2);
      expect(problems[0]).toBe('#chart-seats not drawn (drawn=null, 0 plotted)');
      expect(problems[1]).toMatch(/^console: console.error: the seatsChart could not be drawn: TypeError/);
    });
  });
});
