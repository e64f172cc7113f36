/**
 * `npm run bench [scenario …]`: the performance suite. Runs the named scenarios (all by default)
 * against the running stack, prints one table (each figure, its baseline from the same run, the
 * ratio and the issue's target) and writes the figures to .stack/bench/<timestamp>.json.
 * BENCH_SCALE=small runs a quick version, BENCH_SCALE=smoke the least of each (the test suite's).
 */
import { ConfigError, parseSettings } from '../lib/settings.js';
import { buildPrograms } from '../lib/source-tree.js';
import { benchSettings } from './settings.js';
import { type BenchContext, type Scale, benchContext, machineDescription } from './context.js';
import { SCENARIOS } from './scenarios.js';
import { type Report, renderTable, writeReport } from './report.js';

async function main(): Promise<void> {
  let scale: Scale;
  let ctx: BenchContext;
  const report: Report = {
    startedAt: new Date().toISOString(),
    scale: 'full',
    machine: machineDescription(),
    figures: [],
    notes: ['Shared stack: other work may run on the same machine at the same time, so figures are noisy.'],
  };
  let current = '';
  // Settings first, as every program of the project: bad ones stop the bench before it reads its arguments.
  try {
    scale = parseSettings(benchSettings, process.env).scale;
    report.scale = scale;
    ctx = benchContext(scale, report, () => current);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`bench: bad configuration\n  ${error.problems.join('\n  ')}`);
    process.exit(2);
  }
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !SCENARIOS.some((s) => s.name === w));
  if (unknown.length > 0) {
    console.error(
      `unknown scenario ${unknown.join(', ')}; scenarios:\n${SCENARIOS.map((s) => `  ${s.name}  ${s.description}`).join('\n')}`,
    );
    process.exit(2);
  }
  const selected = wanted.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => wanted.includes(s.name));
  // The scenarios start compiled programs (the provider, consumers): built from the sources as they are.
  buildPrograms();
  let failed = false;
  for (const scenario of selected) {
    current = scenario.name;
    console.error(`running ${scenario.name} …`);
    try {
      await scenario.run(ctx);
    } catch (error) {
      failed = true;
      report.notes.push(`${scenario.name} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  console.log(renderTable(report));
  console.log(`\nfigures written to ${writeReport(report)}`);
  process.exit(failed ? 1 : 0);
}

await main();
