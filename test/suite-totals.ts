/**
 * How a vitest JSON report counts for `npm run test:all` (pure, unit-tested in
 * test/unit/suite-totals.test.ts). A test that did not run is no pass: a skipped, todo or pending
 * test and a test file that ran no test at all each count as a failure of the full suite, named in
 * `problems`, so CI cannot go green with a guard quietly switched off. A run narrowed by arguments
 * (a file filter, -t) skips tests on purpose: there, they are only counted.
 */
export interface Totals {
  passed: number;
  failed: number;
  skipped: number;
}

export interface VitestJson {
  testResults: {
    status: string;
    name: string;
    message?: string;
    assertionResults: { status: string; fullName?: string; title?: string }[];
  }[];
}

export interface Counted {
  totals: Totals;
  /** One sentence per test or file that did not run, naming it (empty when narrowed). */
  problems: string[];
  /** Every failure counted, one line each (file, test), for the end of the log where a reader looks first. */
  failures: string[];
}

/**
 * Counts a report. A failed file (a beforeAll that threw) marks its unrun tests failed: nothing
 * that needs the stack is skipped. `strict` (the full suite) turns every test that did not run,
 * and every file without a test, into a failure.
 */
export function countReport(
  report: VitestJson,
  vitestOk: boolean,
  options: { strict: boolean; root?: string },
): Counted {
  const totals: Totals = { passed: 0, failed: 0, skipped: 0 };
  const problems: string[] = [];
  const failures: string[] = [];
  const shown = (name: string) =>
    options.root !== undefined && name.startsWith(`${options.root}/`) ? name.slice(options.root.length + 1) : name;
  for (const file of report.testResults) {
    const fileFailed = file.status === 'failed';
    if (file.assertionResults.length === 0) {
      if (fileFailed) {
        totals.failed += 1;
        failures.push(`${shown(file.name)}: ${file.message?.split('\n')[0] ?? 'failed before any test ran'}`);
      } else if (options.strict) {
        totals.failed += 1;
        problems.push(`${shown(file.name)} ran no test: a test file must hold at least one test that runs`);
        failures.push(`${shown(file.name)}: ran no test`);
      }
    }
    for (const test of file.assertionResults) {
      const named = `${shown(file.name)}: "${test.fullName ?? test.title ?? '?'}"`;
      if (test.status === 'passed') totals.passed += 1;
      else if (test.status === 'failed') {
        totals.failed += 1;
        failures.push(named);
      } else if (fileFailed || options.strict) {
        totals.failed += 1;
        failures.push(`${named} (did not run: ${test.status})`);
        if (!fileFailed)
          problems.push(`${named} did not run (${test.status}): remove .skip, .todo or .only, or the test`);
      } else totals.skipped += 1;
    }
  }
  if (!vitestOk && totals.failed === 0) {
    totals.failed = 1;
    failures.push(
      'vitest exited with a failure outside any test (an unhandled error, or a crash): see its output above',
    );
  }
  return { totals, problems, failures };
}

export function add(into: Totals, more: Totals): void {
  into.passed += more.passed;
  into.failed += more.failed;
  into.skipped += more.skipped;
}

export function totalsLine(totals: Totals): string {
  const skipped = totals.skipped > 0 ? `, ${totals.skipped} skipped` : '';
  return `${totals.passed} passed, ${totals.failed} failed${skipped}`;
}
