/**
 * test:all's checks and `npm run lint` are one list: each command of the lint script is a check of
 * test:all, in the same order, after the type check. A check added to one and not the other (a
 * linter run by CI that a developer's lint skips, or the reverse) fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../stack/config.js';
import { CHECKS } from '../suite-plan.js';

const scripts = (
  JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

describe("test:all's checks", () => {
  it('are the type check, then exactly the commands of npm run lint, in order', () => {
    const [first, ...rest] = CHECKS;
    expect(first).toEqual(['typecheck', ['tsc', '--noEmit']]);
    expect(scripts.typecheck).toBe('tsc --noEmit');
    expect(scripts.lint!.split(' && ')).toEqual(rest.map(([, command]) => command.join(' ')));
  });

  it('include the unused-code check (knip), with its configuration', async () => {
    expect(CHECKS.map(([, command]) => command[0])).toContain('knip');
    const config = (await import('../../knip.js')).default;
    expect(config.entry).toEqual(
      expect.arrayContaining(['consumers/seat-availability/main.ts', 'rehearsal/html/charts.js']),
    );
  });
});
