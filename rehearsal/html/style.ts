/** The HTML report's stylesheet, inlined into the page: system fonts only, nothing fetched. */
export const REPORT_STYLE = `
:root { color-scheme: light; --ink: #0f172a; --muted: #64748b; --line: #e2e8f0; --ok: #047857; --fail: #b91c1c; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: #f8fafc; }
main { max-width: 1360px; margin: 0 auto; padding: 20px 24px 40px; }
header h1 { margin: 0 0 2px; font-size: 22px; }
header p { margin: 0; color: var(--muted); }
h2 { font-size: 16px; margin: 0 0 10px; }
section, figure { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin: 14px 0 0; }
.verdict.ok { border-left: 6px solid var(--ok); }
.verdict.fail { border-left: 6px solid var(--fail); }
.verdict.ok h2 { color: var(--ok); }
.verdict.fail h2 { color: var(--fail); }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.ok .mark { color: var(--ok); font-weight: 700; }
tr.fail .mark, tr.fail td { color: var(--fail); font-weight: 600; }
.checks td.mark { width: 40px; }
td .note { font-size: 12px; color: var(--muted); font-weight: 400; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px; }
.figure { display: flex; flex-direction: column; padding: 8px 10px; background: #f1f5f9; border-radius: 6px; }
.figure .value { font-size: 20px; font-weight: 700; font-variant-numeric: tabular-nums; }
.figure .label { color: var(--muted); }
.figure .note { font-size: 12px; color: var(--muted); }
.severity { padding: 1px 6px; border-radius: 4px; background: #e2e8f0; font-size: 12px; }
.severity.critical { background: #fee2e2; color: #991b1b; }
.severity.warning { background: #fef3c7; color: #92400e; }
.empty, .no-data { color: var(--muted); margin: 4px 0; }
.grid2 { display: grid; grid-template-columns: 1fr 1fr; gap: 0 14px; }
@media (max-width: 1000px) { .grid2 { grid-template-columns: 1fr; } }
figure { position: relative; }
figcaption { font-weight: 600; margin-bottom: 4px; }
figcaption span { font-weight: 400; color: var(--muted); }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; color: #334155; margin-bottom: 2px; }
.key { display: inline-flex; align-items: center; gap: 5px; }
.swatch { display: inline-block; width: 18px; height: 0; border-top: 2.5px solid var(--color); }
.swatch.dashed { border-top-style: dashed; }
.swatch.block { height: 10px; border: none; background: var(--color); border-radius: 2px; }
.plot { position: relative; }
.plot svg { display: block; width: 100%; height: auto; overflow: visible; }
svg text { font-size: 11px; fill: #475569; }
svg .axis-title { font-size: 11px; fill: var(--muted); }
svg .grid { stroke: #eef2f7; }
svg .axis { stroke: #94a3b8; }
svg .drill-band { fill: #fecaca; opacity: 0.35; }
svg .drill-kill { stroke: #dc2626; stroke-width: 1.5; }
svg .drill-back { stroke: #dc2626; stroke-width: 1; stroke-dasharray: 3 3; }
svg .drill-label { fill: #b91c1c; font-weight: 600; }
svg .row-label { fill: var(--ink); font-size: 12px; }
svg .bar-note { font-size: 11px; fill: #334155; }
svg .bar-note.inside { fill: #fff; font-weight: 600; }
svg .whole-marker { stroke: var(--ink); stroke-width: 2.5; }
svg .crosshair { stroke: #64748b; stroke-dasharray: 2 2; }
.tip { display: none; position: absolute; top: 30px; min-width: 180px; padding: 6px 8px; font-size: 12px; background: rgba(15, 23, 42, 0.92); color: #fff; border-radius: 6px; pointer-events: none; }
.full { grid-column: 1 / -1; }
h2 .muted { font-weight: 400; font-size: 13px; color: var(--muted); }
footer { color: var(--muted); font-size: 12px; margin-top: 16px; }
`;
