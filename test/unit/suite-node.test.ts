/**
 * The suite runs on the Node it claims to: test:all names each run's Node in STAGEFRONT_SUITE_NODE,
 * and this file fails when the tests, or the programs they start with `node` from PATH, run on
 * another (say Node 24's run fell back to the machine's Node 20). Run on its own, it checks that the
 * running Node is one package.json's engines supports.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../stack/config.js';
import { SUITE_NODE_ENV } from '../suite-plan.js';

/** Whether `version` (v24.1.0) is in an engines range made of caret ranges (^20.19.0 || ^24.0.0), the only form package.json uses. */
function inCaretRanges(version: string, range: string): boolean {
  const [major, minor, patch] = version.replace(/^v/, '').split('.').map(Number);
  return range.split('||').some((part) => {
    const match = /^\s*\^(\d+)\.(\d+)\.(\d+)\s*$/.exec(part);
    if (!match)
      throw new Error(
        `engines.node part "${part.trim()}" is not a caret range (^22.13.0); this check reads only those`,
      );
    const [, wantMajor, wantMinor, wantPatch] = match.map(Number);
    return major === wantMajor && (minor! > wantMinor! || (minor === wantMinor && patch! >= wantPatch!));
  });
}

const engines = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { engines: { node: string } })
  .engines.node;

describe('the Node the suite runs on', () => {
  it('is the one test:all started this run on, for the tests and for `node` on PATH', () => {
    const expected = process.env[SUITE_NODE_ENV] ?? process.version;
    expect(process.version).toBe(expected);
    const onPath = spawnSync('node', ['-p', 'process.version'], { encoding: 'utf8' });
    expect(onPath.stdout.trim()).toBe(expected);
  });

  it('is one that package.json supports (engines.node)', () => {
    expect(inCaretRanges(process.version, engines), `${process.version} against ${engines}`).toBe(true);
    expect(
      inCaretRanges('v20.19.0', engines) && inCaretRanges('v22.13.0', engines) && inCaretRanges('v24.0.0', engines),
    ).toBe(true);
    expect(
      inCaretRanges('v20.18.3', engines) || inCaretRanges('v21.7.0', engines) || inCaretRanges('v26.0.0', engines),
    ).toBe(false);
  });
});
