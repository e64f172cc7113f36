/**
 * The test command: starts what is missing of the native stack, type-checks, lints, runs every
 * test against the real processes, stops what it started (everything, under CI=true), and ends
 * with the totals on a line of their own: `N passed, N failed` (`, N skipped` when any).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger } from '../lib/logger.js';
import { projectRoot, stackLayout } from '../stack/config.js';
import { stackStatus, startStack, stopStack } from '../stack/launcher.js';
import { outsideDataRoot } from '../stack/postgres.js';

interface Totals {
  passed: number;
  failed: number;
  skipped: number;
}

interface VitestJson {
  testResults: { status: string; name: string; message?: string; assertionResults: { status: string }[] }[];
}

function runStep(command: string, args: string[]): boolean {
  const result = spawnSync(command, args, { cwd: projectRoot, stdio: 'inherit' });
  return result.status === 0;
}

/** A failed file (a beforeAll that threw) marks its unrun tests failed: nothing that needs the stack is skipped. */
function countVitest(reportFile: string, vitestOk: boolean): Totals {
  const totals: Totals = { passed: 0, failed: 0, skipped: 0 };
  let report: VitestJson;
  try {
    report = JSON.parse(readFileSync(reportFile, 'utf8')) as VitestJson;
  } catch {
    return { passed: 0, failed: 1, skipped: 0 }; // vitest itself crashed
  }
  for (const file of report.testResults) {
    const fileFailed = file.status === 'failed';
    if (fileFailed && file.assertionResults.length === 0) totals.failed += 1;
    for (const test of file.assertionResults) {
      if (test.status === 'passed') totals.passed += 1;
      else if (test.status === 'failed' || fileFailed) totals.failed += 1;
      else totals.skipped += 1;
    }
  }
  if (!vitestOk && totals.failed === 0) totals.failed = 1;
  return totals;
}

async function main(): Promise<number> {
  const logger = createLogger({ name: 'test-suite' });
  const layout = stackLayout();
  const wasRunning = (await stackStatus(layout)).every((c) => c.healthy);
  const totals: Totals = { passed: 0, failed: 0, skipped: 0 };
  try {
    await startStack(logger, layout);
    for (const [name, args] of [['typecheck', ['tsc', '--noEmit']], ['lint', ['eslint', '.']]] as const) {
      const ok = runStep('npx', [...args]);
      if (ok) totals.passed += 1;
      else {
        totals.failed += 1;
        console.error(`${name} failed`);
      }
    }
    const reportFile = join(layout.home, 'test-results.json');
    mkdirSync(layout.home, { recursive: true });
    rmSync(reportFile, { force: true });
    const ok = runStep('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${reportFile}`, ...process.argv.slice(2)]);
    const counted = countVitest(reportFile, ok);
    totals.passed += counted.passed;
    totals.failed += counted.failed;
    totals.skipped += counted.skipped;
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    totals.failed += 1;
  } finally {
    if (process.env.CI === 'true' || !wasRunning) await stopStack(logger, layout);
    // A CI clone is thrown away: so are the clusters that had to live outside it.
    if (process.env.CI === 'true') rmSync(outsideDataRoot(), { recursive: true, force: true });
  }
  const skipped = totals.skipped > 0 ? `, ${totals.skipped} skipped` : '';
  console.log(`${totals.passed} passed, ${totals.failed} failed${skipped}`);
  return totals.failed === 0 ? 0 : 1;
}

main().then((code) => process.exit(code));
