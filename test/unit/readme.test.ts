import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PROGRAM_SETTINGS, README, renderSettingsBlocks } from '../../scripts/readme-settings.js';

describe('README', () => {
  const readme = readFileSync(README, 'utf8');

  it('has a settings table for every program, equal to its settings table in code (npm run docs:readme rewrites them)', () => {
    for (const name of Object.keys(PROGRAM_SETTINGS)) expect(readme, `settings:${name} block`).toContain(`<!-- settings:${name} -->`);
    expect(renderSettingsBlocks(readme) === readme, 'README settings tables are stale: run npm run docs:readme').toBe(true);
  });

  it('starts with the two command lines: the rehearsal and the tests', () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(firstBlock).toContain('npm run -s rehearsal');
    expect(firstBlock).toContain('npm run -s test:all');
    expect(readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8')).toContain('npm ci --no-audit --no-fund && npm run -s test:all');
  });

  it('names only npm scripts that exist', () => {
    const scripts = Object.keys((JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts);
    const named = [...readme.matchAll(/npm run (?:-s )?([a-z][a-z:-]*)/g)].map((m) => m[1]);
    expect(named.filter((name) => !scripts.includes(name ?? ''))).toEqual([]);
  });
});
