/**
 * Issue 9, item 6: no program has a working default for a password or token. A secret setting is
 * required (or empty, meaning none), a program started without it stops with one sentence naming
 * the variable, and neither `--help` nor an error shows a secret's value.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineSettings, zString } from '../../lib/settings.js';
import { PROGRAM_SETTINGS } from '../../scripts/readme-settings.js';
import { projectRoot } from '../../stack/config.js';

/** Runs a program's entry point with nothing but PATH in its environment. */
function runBare(entry: string, args: string[] = [], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(projectRoot, entry), ...args], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

const PROGRAMS = [
  {
    entry: 'seat-service/cli.ts',
    args: ['expire'],
    secrets: ['SEAT_DB_URL', 'SEAT_DB_ADMIN_URL', 'SEAT_SERVICE_DB_PASSWORD', 'DEBEZIUM_DB_PASSWORD'],
  },
  { entry: 'seat-service/sweeper-main.ts', args: [], secrets: ['SEAT_DB_URL'] },
  { entry: 'connectors/cli.ts', args: ['status'], secrets: ['CONNECTOR_SEAT_DB_URL'] },
] as const;

describe('secrets have no default', () => {
  it('no settings table of any program has a default for a secret, nor a default URL with a password in it', () => {
    const offenders: string[] = [];
    for (const [program, def] of Object.entries(PROGRAM_SETTINGS)) {
      for (const setting of Object.values(def.settings)) {
        if (setting.secret && setting.default !== undefined && setting.default !== '')
          offenders.push(`${program} ${setting.env}`);
        if (/^[a-z]+:\/\/[^/@\s]*:[^/@\s]+@/.test(setting.default ?? ''))
          offenders.push(`${program} ${setting.env} (credentials in its default URL)`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('a settings table that gives a secret a default is refused when it is declared', () => {
    const declare = () =>
      defineSettings('bad', {
        password: {
          env: 'BAD_PASSWORD',
          default: 'hunter2',
          parser: zString({ minLength: 1 }),
          description: 'A password.',
          secret: true,
        },
      });
    expect(declare).toThrow(/BAD_PASSWORD is a secret and must not have a default/);
  });

  it.each(PROGRAMS)(
    '$entry stops at start naming each missing secret, in one sentence each',
    ({ entry, args, secrets }) => {
      const { code, output } = runBare(entry, [...args]);
      expect(code, output).toBe(2);
      for (const name of secrets)
        expect(output).toMatch(new RegExp(`^  ${name} is required but not set: .*; set it to e\\.g\\. .*\\.$`, 'm'));
    },
  );

  it.each(PROGRAMS)(
    '$entry --help says its secrets are required, not that they have a default',
    ({ entry, secrets }) => {
      const { code, output } = runBare(entry, ['--help']);
      expect(code, output).toBe(0);
      for (const name of secrets) expect(output).toMatch(new RegExp(`^  ${name} +required, secret$`, 'm'));
      expect(output).not.toContain('has a default');
    },
  );

  it('a bad secret is reported without its value', () => {
    const { code, output } = runBare('seat-service/sweeper-main.ts', [], { SEAT_DB_URL: 'not-a-url-but-a-s3cret' });
    expect(code).toBe(2);
    expect(output).toContain('SEAT_DB_URL (secret, value not shown) is not valid');
    expect(output).not.toContain('s3cret');
  });
});
