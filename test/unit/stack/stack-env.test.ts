/**
 * `npm run stack -- env` gives a shell what the project's commands need against the local stack:
 * evaluated by bash in an environment without any of the settings, the seat service's and the
 * connector command's settings parse from it (what the guides ask a newcomer to run).
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { connectorSettings } from '../../../connectors/settings.js';
import { parseSettings } from '../../../lib/settings.js';
import { seatServiceSettings } from '../../../seat-service/settings.js';
import { localStackProgramEnv, stackLayout } from '../../../stack/config.js';

/** The environment a bash that evaluated the command's output has, from an environment with PATH alone. */
function evaluated(): Record<string, string> {
  const printed = execFileSync('bash', ['-c', 'eval "$(node --import tsx stack/cli.ts env)" && env -0'], {
    env: { PATH: process.env.PATH },
    encoding: 'utf8',
  });
  return Object.fromEntries(
    printed
      .split('\0')
      .filter((entry) => entry.includes('='))
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  );
}

describe('npm run stack -- env', () => {
  const env = evaluated();

  it("exports every setting of the stack's programs, each value as the stack has it", () => {
    const expected = localStackProgramEnv(stackLayout({}));
    for (const [name, value] of Object.entries(expected)) expect(env[name], name).toBe(value);
    expect(Object.keys(expected)).toEqual(
      expect.arrayContaining(['SEAT_DB_URL', 'SEAT_DB_ADMIN_URL', 'SEAT_SERVICE_DB_PASSWORD', 'DEBEZIUM_DB_PASSWORD']),
    );
  });

  it('is enough for the seat service and the connector command, which refuse without it', () => {
    expect(() => parseSettings(seatServiceSettings, {})).toThrow(/SEAT_DB_URL/);
    expect(() => parseSettings(seatServiceSettings, env)).not.toThrow();
    expect(() => parseSettings(connectorSettings, env)).not.toThrow();
  });
});
