/* global document, console */
/*
 * The HTML report's charts, drawn as SVG from the rehearsal record embedded in the page. This file
 * runs in the browser: it is inlined into the report as it is (no build step), so it is plain
 * JavaScript with no imports. Every text taken from the record is set with textContent, never as
 * markup. Each chart marks its figure data-drawn="yes" (or "empty" when the run had no such data).
 */
(function drawReport() {
  'use strict';
  const SVG = 'http://www.w3.org/2000/svg';
  const record = JSON.parse(document.getElementById('record').textContent);
  const t0 = record.startedAt;
  const runSeconds = Math.max(1, (record.finishedAt - t0) / 1000);
  const seconds = (at) => (at - t0) / 1000;

  const PALETTE = ['#2563eb', '#d97706', '#059669', '#7c3aed', '#db2777', '#0891b2', '#65a30d', '#9f1239'];
  const consumerNames = [];
  for (const sample of record.samples)
    for (const c of sample.consumers) if (!consumerNames.includes(c.consumer)) consumerNames.push(c.consumer);
  for (const l of record.latency) if (!consumerNames.includes(l.consumer)) consumerNames.push(l.consumer);
  for (const s of record.stages) if (!consumerNames.includes(s.consumer)) consumerNames.push(s.consumer);
  const consumerColor = (name) => PALETTE[Math.max(0, consumerNames.indexOf(name)) % PALETTE.length];
  const SEVERITY_COLORS = { critical: '#dc2626', warning: '#f59e0b', info: '#3b82f6' };

  // --- formatting -------------------------------------------------------------------------
  const round = (v, digits) => Number(v.toFixed(digits));
  const formatMs = (v) => (v < 1000 ? `${round(v, v < 10 ? 1 : 0)} ms` : `${round(v / 1000, v < 10000 ? 1 : 0)} s`);
  const formatCount = (v) => (Math.abs(v) >= 10000 ? `${round(v / 1000, 0)}k` : Math.round(v).toLocaleString('en-US'));
  const formatMiB = (v) => `${round(v, v < 10 ? 1 : 0)} MiB`;
  const formatClock = (s) => {
    const sign = s < 0 ? '−' : '';
    const whole = Math.round(Math.abs(s));
    return `${sign}${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
  };

  // --- drawing helpers --------------------------------------------------------------------
  function svgEl(tag, attrs, parent, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  function figure(id) {
    const fig = document.getElementById(id);
    if (!fig) throw new Error(`the report has no chart container #${id}`);
    return fig;
  }

  /** A fresh SVG the width of the figure. */
  function canvas(fig, height) {
    const width = Math.max(360, Math.floor(fig.querySelector('.plot').clientWidth || 640));
    const svg = svgEl('svg', {
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      role: 'img',
      'aria-label': fig.dataset.title || '',
    });
    fig.querySelector('.plot').appendChild(svg);
    return { svg, width, height };
  }

  function legend(fig, entries) {
    const box = fig.querySelector('.legend');
    for (const entry of entries) {
      const key = document.createElement('span');
      key.className = 'key';
      const swatch = document.createElement('i');
      swatch.className = entry.dashed ? 'swatch dashed' : entry.block ? 'swatch block' : 'swatch';
      swatch.style.setProperty('--color', entry.color);
      key.appendChild(swatch);
      key.appendChild(document.createTextNode(entry.name));
      box.appendChild(key);
    }
  }

  function noData(fig, message) {
    const note = document.createElement('p');
    note.className = 'no-data';
    note.textContent = message;
    fig.querySelector('.plot').appendChild(note);
    fig.dataset.drawn = 'empty';
  }

  /** About `count` round steps (1, 2, 5 × 10^k) from 0 (or min) to max. */
  function niceStep(span, count) {
    const raw = span / Math.max(1, count);
    const power = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 2.5, 5, 10].map((f) => f * power).find((s) => s >= raw);
    return step || power * 10;
  }

  function linearScale(min, max, from, to) {
    const span = max - min || 1;
    return (v) => from + ((v - min) / span) * (to - from);
  }

  function timeAxis(width, left, right) {
    const x = linearScale(0, runSeconds, left, width - right);
    const step = [5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600].find((s) => runSeconds / s <= 10) || 7200;
    const ticks = [];
    for (let s = 0; s <= runSeconds + 1e-9; s += step) ticks.push(s);
    return { x, ticks };
  }

  function drawTimeTicks(svg, axis, top, bottom, height) {
    for (const s of axis.ticks) {
      svgEl('line', { x1: axis.x(s), x2: axis.x(s), y1: top, y2: bottom, class: 'grid' }, svg);
      svgEl('text', { x: axis.x(s), y: bottom + 16, class: 'tick', 'text-anchor': 'middle' }, svg, formatClock(s));
    }
    svgEl(
      'text',
      { x: axis.x(runSeconds / 2), y: height - 4, class: 'axis-title', 'text-anchor': 'middle' },
      svg,
      'time since the run began (m:ss)',
    );
  }

  /** Each drill as a shaded band from the kill until it was back, with its name above the plot. */
  function drawDrills(svg, x, top, bottom) {
    record.drills.forEach((drill, i) => {
      const from = x(Math.max(0, seconds(drill.killedAt)));
      const to = x(Math.min(runSeconds, seconds(drill.backAt === null ? record.finishedAt : drill.backAt)));
      const group = svgEl('g', { class: 'drill' }, svg);
      svgEl(
        'title',
        {},
        group,
        `${drill.target} killed at ${formatClock(seconds(drill.killedAt))}, ` +
          (drill.backAt === null ? 'never back' : `back at ${formatClock(seconds(drill.backAt))}`),
      );
      svgEl(
        'rect',
        { x: from, y: top, width: Math.max(1, to - from), height: bottom - top, class: 'drill-band' },
        group,
      );
      svgEl('line', { x1: from, x2: from, y1: top - 4 - (i % 2) * 12, y2: bottom, class: 'drill-kill' }, group);
      if (drill.backAt !== null) svgEl('line', { x1: to, x2: to, y1: top, y2: bottom, class: 'drill-back' }, group);
      svgEl(
        'text',
        { x: from + 3, y: top - 6 - (i % 2) * 12, class: 'drill-label' },
        group,
        `✕ ${drill.target}${drill.backAt === null ? ' (never back)' : ''}`,
      );
    });
  }

  /**
   * A time chart of several series; a null value breaks a line. Options: title, unit label,
   * value format, log scale.
   */
  function timeChart(id, options) {
    const fig = figure(id);
    const series = options.series.filter((s) => s.points.some((p) => p[1] !== null));
    if (series.length === 0) return noData(fig, options.empty);
    legend(fig, [...series.filter((s) => !s.hideInLegend), ...(options.extraKeys || [])]);
    const { svg, width, height } = canvas(fig, options.height || 270);
    const margin = { top: 40, right: 18, bottom: 40, left: 72 };
    const bottom = height - margin.bottom;
    const values = series.flatMap((s) => s.points.map((p) => p[1]).filter((v) => v !== null));
    const axis = timeAxis(width, margin.left, margin.right);

    let y;
    let yTicks = [];
    if (options.log) {
      const positive = values.filter((v) => v > 0);
      const steps = [];
      for (let p = -1; p <= 7; p++) for (const f of [1, 2, 5]) steps.push(f * 10 ** p);
      const min = Math.max(1, Math.min(...positive));
      const max = Math.max(...positive);
      const lo = [...steps].reverse().find((v) => v <= min) || 1;
      const hi = Math.max(lo * 10, steps.find((v) => v >= max) || max);
      const ly = linearScale(Math.log10(lo), Math.log10(hi), bottom, margin.top);
      y = (v) => ly(Math.log10(Math.max(lo, v)));
      yTicks = steps.filter((v) => v >= lo && v <= hi);
    } else {
      const max = Math.max(...values, options.minMax || 0) || 1;
      const step = niceStep(max, 5);
      const top = Math.ceil(max / step) * step;
      y = linearScale(0, top, bottom, margin.top);
      for (let v = 0; v <= top + step / 1e6; v += step) yTicks.push(v);
    }

    for (const v of yTicks) {
      svgEl('line', { x1: margin.left, x2: width - margin.right, y1: y(v), y2: y(v), class: 'grid' }, svg);
      svgEl('text', { x: margin.left - 6, y: y(v) + 4, class: 'tick', 'text-anchor': 'end' }, svg, options.format(v));
    }
    drawTimeTicks(svg, axis, margin.top, bottom, height);
    svgEl(
      'text',
      {
        x: 14,
        y: (margin.top + bottom) / 2,
        class: 'axis-title',
        'text-anchor': 'middle',
        transform: `rotate(-90 14 ${(margin.top + bottom) / 2})`,
      },
      svg,
      options.unit,
    );
    drawDrills(svg, axis.x, margin.top, bottom);
    svgEl('line', { x1: margin.left, x2: width - margin.right, y1: bottom, y2: bottom, class: 'axis' }, svg);
    svgEl('line', { x1: margin.left, x2: margin.left, y1: margin.top, y2: bottom, class: 'axis' }, svg);

    const gap = gapSeconds(series);
    for (const s of series) {
      let d = '';
      let run = [];
      let previous = null;
      const flush = () => {
        if (run.length === 1)
          svgEl('circle', { cx: run[0][0], cy: run[0][1], r: 2.5, fill: s.color, class: 'series' }, svg);
        run = [];
      };
      for (const [t, v] of s.points) {
        if (v === null) {
          flush();
          previous = null;
          continue;
        }
        if (previous !== null && t - previous > gap) flush();
        previous = t;
        const px = axis.x(t);
        const py = options.log && v <= 0 ? bottom : y(v);
        d += `${run.length === 0 ? 'M' : 'L'}${px.toFixed(1)},${py.toFixed(1)}`;
        run.push([px, py]);
      }
      flush();
      if (d.includes('L')) {
        svgEl(
          'path',
          {
            d,
            fill: 'none',
            stroke: s.color,
            'stroke-width': s.width || 1.8,
            'stroke-dasharray': s.dashed ? '5 3' : 'none',
            opacity: s.opacity || 1,
            class: 'series',
          },
          svg,
        );
      }
    }
    hover(fig, svg, series, axis.x, margin, bottom, width, options.format);
    fig.dataset.drawn = 'yes';
  }

  /** Points further apart than this are not joined: three times the usual spacing, at least 3 s. */
  function gapSeconds(series) {
    const steps = [];
    for (const s of series) for (let i = 1; i < s.points.length; i++) steps.push(s.points[i][0] - s.points[i - 1][0]);
    steps.sort((a, b) => a - b);
    const usual = steps.length === 0 ? 1 : steps[Math.floor(steps.length / 2)];
    return Math.max(3, usual * 3);
  }

  /** A crosshair and the values of every series at the nearest sample under the pointer. */
  function hover(fig, svg, series, x, margin, bottom, width, format) {
    const tip = document.createElement('div');
    tip.className = 'tip';
    fig.querySelector('.plot').appendChild(tip);
    const line = svgEl('line', { y1: margin.top, y2: bottom, class: 'crosshair', visibility: 'hidden' }, svg);
    const area = svgEl(
      'rect',
      {
        x: margin.left,
        y: margin.top,
        width: width - margin.left - margin.right,
        height: bottom - margin.top,
        fill: 'transparent',
      },
      svg,
    );
    area.addEventListener('mousemove', (event) => {
      const box = svg.getBoundingClientRect();
      const px = ((event.clientX - box.left) / box.width) * width;
      const t = ((px - margin.left) / (width - margin.left - margin.right)) * runSeconds;
      line.setAttribute('x1', String(px));
      line.setAttribute('x2', String(px));
      line.setAttribute('visibility', 'visible');
      tip.textContent = '';
      const head = document.createElement('b');
      head.textContent = formatClock(t);
      tip.appendChild(head);
      for (const s of series) {
        const nearest = s.points.reduce(
          (best, p) => (Math.abs(p[0] - t) < Math.abs(best[0] - t) ? p : best),
          s.points[0],
        );
        const row = document.createElement('div');
        row.textContent = `${s.tipName || s.name}: ${nearest[1] === null ? '–' : format(nearest[1])}`;
        tip.appendChild(row);
      }
      tip.style.left = `${Math.min(box.width - 220, event.clientX - box.left + 12)}px`;
      tip.style.display = 'block';
    });
    area.addEventListener('mouseleave', () => {
      line.setAttribute('visibility', 'hidden');
      tip.style.display = 'none';
    });
  }

  // --- the charts -------------------------------------------------------------------------
  function latencyChart() {
    const series = [];
    const inOrder = [...record.latency].sort(
      (a, b) => consumerNames.indexOf(a.consumer) - consumerNames.indexOf(b.consumer),
    );
    for (const l of inOrder) {
      const color = consumerColor(l.consumer);
      series.push({
        name: l.consumer,
        tipName: `${l.consumer} p50`,
        color,
        points: l.points.map((p) => [seconds(p.at), p.p50]),
        width: 2,
      });
      series.push({
        name: `${l.consumer} p99`,
        color,
        points: l.points.map((p) => [seconds(p.at), p.p99]),
        dashed: true,
        width: 1.2,
        opacity: 0.75,
        hideInLegend: true,
      });
    }
    const extraKeys = [
      { name: 'p50', color: '#64748b' },
      { name: 'p99', color: '#64748b', dashed: true },
    ];
    timeChart('chart-latency', {
      series,
      extraKeys,
      unit: 'commit → effect (log scale)',
      format: formatMs,
      log: true,
      empty: 'No event was handled during the run.',
    });
  }

  /** Per second between consecutive samples: outbox rows published, and events each consumer handled. */
  function rates(valueOf) {
    const points = [];
    for (let i = 1; i < record.samples.length; i++) {
      const a = record.samples[i - 1];
      const b = record.samples[i];
      const va = valueOf(a);
      const vb = valueOf(b);
      const dt = (b.at - a.at) / 1000;
      points.push([seconds(b.at), va === null || vb === null || dt <= 0 ? null : Math.max(0, (vb - va) / dt)]);
    }
    return points;
  }

  const consumerValue = (name, field) => (sample) => {
    const c = sample.consumers.find((x) => x.consumer === name);
    return c === undefined ? null : c[field];
  };

  function throughputChart() {
    const series = [{ name: 'outbox rows published', color: '#334155', points: rates((s) => s.published), width: 2.2 }];
    for (const name of consumerNames)
      series.push({
        name: `handled by ${name}`,
        color: consumerColor(name),
        points: rates(consumerValue(name, 'handled')),
        width: 1.5,
      });
    timeChart('chart-throughput', {
      series,
      unit: 'events per second',
      format: formatCount,
      empty: 'Fewer than two samples: no rate to show.',
    });
  }

  function lagChart() {
    const series = consumerNames.map((name) => ({
      name,
      color: consumerColor(name),
      points: record.samples.map((s) => [seconds(s.at), consumerValue(name, 'lag')(s)]),
      width: 2,
    }));
    timeChart('chart-lag', {
      series,
      unit: 'lag (events published, not handled)',
      format: formatCount,
      minMax: 5,
      empty: 'No samples were taken.',
    });
  }

  function walChart() {
    const points = record.samples.map((s) => [
      seconds(s.at),
      s.retainedWalBytes === null ? null : s.retainedWalBytes / 1024 / 1024,
    ]);
    timeChart('chart-wal', {
      series: [{ name: 'WAL the outbox slot holds back', color: '#7c3aed', points, width: 2 }],
      unit: 'retained WAL (MiB)',
      format: formatMiB,
      minMax: 1,
      empty: 'The slot was missing or unreadable at every sample.',
    });
  }

  function seatsChart() {
    const of = (field, name, color) => ({
      name,
      color,
      points: record.samples.map((s) => [seconds(s.at), s.seats[field]]),
      width: 2,
    });
    timeChart('chart-seats', {
      series: [of('sold', 'sold', '#059669'), of('held', 'held', '#d97706'), of('free', 'free', '#94a3b8')],
      unit: 'seats',
      format: formatCount,
      empty: 'No samples were taken.',
    });
  }

  /** One bar per alert over the run's time axis; those that began before the run start at its left edge. */
  function alertTimeline() {
    const fig = figure('chart-alerts');
    const alerts = [...record.alerts].sort((a, b) => a.startsAt - b.startsAt);
    const severities = [...new Set(alerts.map((a) => a.severity))];
    if (alerts.length === 0) return noData(fig, 'No alert fired during the run.');
    legend(fig, [
      ...severities.map((s) => ({ name: s, color: SEVERITY_COLORS[s] || '#64748b', block: true })),
      ...(record.drills.length > 0 ? [{ name: 'drill: killed until back', color: '#fca5a5', block: true }] : []),
    ]);
    const rowHeight = 26;
    const margin = { top: 40, right: 18, bottom: 40, left: 210 };
    const { svg, width, height } = canvas(fig, margin.top + alerts.length * rowHeight + margin.bottom);
    const bottom = height - margin.bottom;
    const axis = timeAxis(width, margin.left, margin.right);
    drawTimeTicks(svg, axis, margin.top, bottom, height);
    drawDrills(svg, axis.x, margin.top, bottom);
    alerts.forEach((alert, i) => {
      const y = margin.top + i * rowHeight;
      const start = seconds(alert.startsAt);
      const end = alert.endsAt === null ? runSeconds : Math.min(runSeconds, seconds(alert.endsAt));
      const from = axis.x(Math.max(0, start));
      const to = Math.max(from + 3, axis.x(Math.max(0, end)));
      const color = SEVERITY_COLORS[alert.severity] || '#64748b';
      const group = svgEl('g', {}, svg);
      svgEl(
        'title',
        {},
        group,
        `${alert.name} (${alert.severity}) from ${formatClock(start)} ${alert.endsAt === null ? 'still firing at the end' : `to ${formatClock(seconds(alert.endsAt))}`}`,
      );
      svgEl(
        'text',
        { x: margin.left - 8, y: y + rowHeight / 2 + 4, class: 'row-label', 'text-anchor': 'end' },
        group,
        alert.name.length > 30 ? `${alert.name.slice(0, 29)}…` : alert.name,
      );
      svgEl(
        'rect',
        { x: from, y: y + 5, width: to - from, height: rowHeight - 10, rx: 3, fill: color, class: 'series' },
        group,
      );
      const notes = [];
      if (alert.beganBeforeRun || start < 0) notes.push(`◀ began ${formatClock(-start)} before the run`);
      if (alert.endsAt === null) notes.push('still firing ▶');
      if (notes.length > 0) {
        const text = notes.join(', ');
        const roomRight = width - margin.right - to > text.length * 6.5;
        const inside = !roomRight && to - from > text.length * 6.5 + 12;
        const place = roomRight
          ? { x: to + 6, class: 'bar-note' }
          : inside
            ? { x: from + 6, class: 'bar-note inside' }
            : { x: from - 6, class: 'bar-note', 'text-anchor': 'end' };
        svgEl('text', { ...place, y: y + rowHeight / 2 + 4 }, group, text);
      }
    });
    svgEl('line', { x1: margin.left, x2: width - margin.right, y1: bottom, y2: bottom, class: 'axis' }, svg);
    fig.dataset.drawn = 'yes';
  }

  const END_TO_END = /end to end|^commit → effect/i;

  /** Per consumer, the median of each stage stacked, and the end-to-end median beside it. */
  function stageBars() {
    const fig = figure('chart-stages');
    const parts = record.stages.filter((s) => !END_TO_END.test(s.stage));
    const stageNames = [...new Set(parts.map((s) => s.stage))];
    const consumers = [...new Set(record.stages.map((s) => s.consumer))];
    const STAGE_COLORS = ['#60a5fa', '#fbbf24', '#a78bfa', '#34d399', '#f87171'];
    const stageColor = (name) => STAGE_COLORS[stageNames.indexOf(name) % STAGE_COLORS.length];
    if (consumers.length === 0) return noData(fig, 'No stage latencies were recorded.');
    legend(fig, [
      ...stageNames.map((name) => ({ name, color: stageColor(name), block: true })),
      { name: 'end to end (p50)', color: '#0f172a' },
    ]);
    const rowHeight = 44;
    const margin = { top: 20, right: 24, bottom: 40, left: 150 };
    const { svg, width, height } = canvas(fig, margin.top + consumers.length * rowHeight + margin.bottom);
    const bottom = height - margin.bottom;
    const totals = consumers.map((c) => {
      const stacked = parts.filter((s) => s.consumer === c).reduce((n, s) => n + s.p50, 0);
      const whole = record.stages.find((s) => s.consumer === c && END_TO_END.test(s.stage));
      return { consumer: c, stacked, whole: whole ? whole.p50 : null };
    });
    const max = Math.max(1, ...totals.map((t) => Math.max(t.stacked, t.whole || 0)));
    const step = niceStep(max, 6);
    const top = Math.ceil(max / step) * step;
    const x = linearScale(0, top, margin.left, width - margin.right);
    for (let v = 0; v <= top + step / 1e6; v += step) {
      svgEl('line', { x1: x(v), x2: x(v), y1: margin.top, y2: bottom, class: 'grid' }, svg);
      svgEl('text', { x: x(v), y: bottom + 16, class: 'tick', 'text-anchor': 'middle' }, svg, formatMs(v));
    }
    svgEl(
      'text',
      { x: (margin.left + width - margin.right) / 2, y: height - 4, class: 'axis-title', 'text-anchor': 'middle' },
      svg,
      'median time in each stage (p50)',
    );
    totals.forEach((total, i) => {
      const y = margin.top + i * rowHeight;
      svgEl(
        'text',
        { x: margin.left - 8, y: y + rowHeight / 2 + 4, class: 'row-label', 'text-anchor': 'end' },
        svg,
        total.consumer,
      );
      let at = 0;
      for (const part of parts.filter((s) => s.consumer === total.consumer)) {
        const group = svgEl('g', {}, svg);
        svgEl(
          'title',
          {},
          group,
          `${total.consumer}, ${part.stage}: p50 ${formatMs(part.p50)}, p99 ${formatMs(part.p99)}, max ${formatMs(part.max)}, ${part.count} events`,
        );
        svgEl(
          'rect',
          {
            x: x(at),
            y: y + 8,
            width: Math.max(1, x(at + part.p50) - x(at)),
            height: rowHeight - 16,
            fill: stageColor(part.stage),
            class: 'series',
          },
          group,
        );
        at += part.p50;
      }
      if (total.whole !== null) {
        svgEl(
          'line',
          { x1: x(total.whole), x2: x(total.whole), y1: y + 3, y2: y + rowHeight - 3, class: 'whole-marker' },
          svg,
        );
        svgEl(
          'text',
          { x: Math.min(x(total.whole) + 5, width - margin.right - 60), y: y + 14, class: 'bar-note' },
          svg,
          formatMs(total.whole),
        );
      }
    });
    svgEl('line', { x1: margin.left, x2: margin.left, y1: margin.top, y2: bottom, class: 'axis' }, svg);
    fig.dataset.drawn = 'yes';
  }

  // Each chart on its own: one that fails still lets the others draw, and the error reaches the console.
  for (const draw of [latencyChart, throughputChart, lagChart, walChart, seatsChart, alertTimeline, stageBars]) {
    try {
      draw();
    } catch (err) {
      console.error(`the ${draw.name} could not be drawn:`, err);
    }
  }
})();
