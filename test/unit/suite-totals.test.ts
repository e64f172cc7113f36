import { describe, expect, it } from 'vitest';
import { countReport, totalsLine, type VitestJson } from '../suite-totals.js';

const file = (name: string, status: string, tests: string[]): VitestJson['testResults'][number] => ({
  name: `/repo/${name}`,
  status,
  assertionResults: tests.map((s, i) => ({ status: s, fullName: `case ${i}` })),
});

describe('how the suite counts a vitest report', () => {
  it('counts passes and failures; a file that failed before its tests ran counts its tests failed', () => {
    const report = {
      testResults: [
        file('a.test.ts', 'passed', ['passed', 'passed']),
        file('b.test.ts', 'failed', ['failed', 'pending']),
        file('c.test.ts', 'failed', []),
      ],
    };
    expect(countReport(report, false, { strict: true }).totals).toEqual({ passed: 2, failed: 3, skipped: 0 });
  });

  it.each(['skipped', 'pending', 'todo', 'disabled'])('the full suite fails a %s test and names it', (status) => {
    const { totals, problems } = countReport({ testResults: [file('a.test.ts', 'passed', ['passed', status])] }, true, {
      strict: true,
      root: '/repo',
    });
    expect(totals).toEqual({ passed: 1, failed: 1, skipped: 0 });
    expect(problems).toEqual([
      `a.test.ts: "case 1" did not run (${status}): remove .skip, .todo or .only, or the test`,
    ]);
  });

  it('the full suite fails a test file that runs no test', () => {
    const { totals, problems } = countReport({ testResults: [file('empty.test.ts', 'passed', [])] }, true, {
      strict: true,
      root: '/repo',
    });
    expect(totals.failed).toBe(1);
    expect(problems).toEqual(['empty.test.ts ran no test: a test file must hold at least one test that runs']);
  });

  it('a narrowed run (a file filter or -t) only counts what it skipped', () => {
    const { totals, problems } = countReport(
      { testResults: [file('a.test.ts', 'passed', ['passed', 'skipped']), file('b.test.ts', 'passed', [])] },
      true,
      { strict: false },
    );
    expect(totals).toEqual({ passed: 1, failed: 0, skipped: 1 });
    expect(problems).toEqual([]);
    expect(totalsLine(totals)).toBe('1 passed, 0 failed, 1 skipped');
  });

  it('vitest failing with every test passed (an unhandled error) is one failure', () => {
    expect(
      countReport({ testResults: [file('a.test.ts', 'passed', ['passed'])] }, false, { strict: true }).totals,
    ).toEqual({ passed: 1, failed: 1, skipped: 0 });
  });

  it('names every failure, so the end of a long log says what failed', () => {
    const report: VitestJson = {
      testResults: [
        file('a.test.ts', 'passed', ['passed']),
        file('b.test.ts', 'failed', ['passed', 'failed']),
        { name: '/repo/c.test.ts', status: 'failed', message: 'beforeAll: stack not up\n  at x', assertionResults: [] },
        file('d.test.ts', 'failed', ['skipped']),
      ],
    };
    expect(countReport(report, false, { strict: true, root: '/repo' }).failures).toEqual([
      'b.test.ts: "case 1"',
      'c.test.ts: beforeAll: stack not up',
      'd.test.ts: "case 0" (did not run: skipped)',
    ]);
  });

  it('vitest failing with every test passed names that too', () => {
    expect(
      countReport({ testResults: [file('a.test.ts', 'passed', ['passed'])] }, false, { strict: true }).failures,
    ).toEqual(['vitest exited with a failure outside any test (an unhandled error, or a crash): see its output above']);
  });
});
