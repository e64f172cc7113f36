import { describe, expect, it } from 'vitest';
import { configForLog, defineSettings, parseSettings } from '../../../lib/settings.js';
import { zUrl } from '../../../lib/setting-parsers.js';
import { redactUserInfo, withoutUserInfo } from '../../../lib/redact.js';
import { captureLogs } from './log-capture.js';

describe('withoutUserInfo', () => {
  it.each([
    ['postgres://svc:s3cret@db:5432/seat', 'postgres://svc:***@db:5432/seat'],
    ['postgresql://svc:p@ss@db/seat', 'postgresql://svc:***@db/seat'],
    [
      'http://user:pw@registry:8081/apis and postgres://a:b@h/d',
      'http://user:***@registry:8081/apis and postgres://a:***@h/d',
    ],
    ['"postgres://svc:x@db/seat"', '"postgres://svc:***@db/seat"'],
    ['postgres://svc@db/seat', 'postgres://svc@db/seat'],
    ['postgres://db/seat?user=a', 'postgres://db/seat?user=a'],
    ['mail to a@b.example, see http://host/x@y', 'mail to a@b.example, see http://host/x@y'],
    ['smtp://:only-password@mail:587', 'smtp://:***@mail:587'],
  ])('%s', (text, shown) => {
    expect(withoutUserInfo(text)).toBe(shown);
  });

  it('reaches strings inside plain objects and arrays, and leaves other values alone', () => {
    const date = new Date(0);
    expect(redactUserInfo({ url: 'postgres://a:b@h/d', list: ['http://u:p@x'], n: 3, date })).toEqual({
      url: 'postgres://a:***@h/d',
      list: ['http://u:***@x'],
      n: 3,
      date,
    });
  });
});

describe('settings errors and logged configurations', () => {
  const def = defineSettings('test-program', {
    databaseUrl: {
      env: 'TEST_DB_URL',
      parser: zUrl({ protocols: ['postgres'], example: 'postgres://user@host/db' }),
      description: 'A database.',
      default: undefined,
    },
  });

  it('echo a bad URL without its password', () => {
    expect(() => parseSettings(def, { TEST_DB_URL: 'mysql://svc:hunter2@db/seat' })).toThrow(
      /TEST_DB_URL="mysql:\/\/svc:\*\*\*@db\/seat" is not valid/,
    );
    expect(() => parseSettings(def, { TEST_DB_URL: 'mysql://svc:hunter2@db/seat' })).not.toThrow(/hunter2/);
  });

  it('log a URL without its password', () => {
    const config = parseSettings(def, { TEST_DB_URL: 'postgres://svc:hunter2@db/seat' });
    expect(config.databaseUrl).toBe('postgres://svc:hunter2@db/seat');
    expect(configForLog(def, config)).toEqual({ databaseUrl: 'postgres://svc:***@db/seat' });
  });
});

describe('log lines', () => {
  it('carry no password of a URL: not in the message, a field or an error', () => {
    const { logger, lines } = captureLogs('info');
    const cause = new Error('connect failed for postgres://svc:hunter2@db/seat');
    logger.error(
      {
        err: new Error('outer postgres://a:hunter2@h/d', { cause }),
        url: 'postgres://svc:hunter2@db/seat',
        nested: { urls: ['http://u:hunter2@x'] },
      },
      'cannot reach postgres://svc:hunter2@db/seat',
    );
    logger.info('plain %s', 'http://u:hunter2@x/y');
    const text = JSON.stringify(lines);
    expect(text).not.toContain('hunter2');
    expect(lines[0]).toMatchObject({
      msg: 'cannot reach postgres://svc:***@db/seat',
      url: 'postgres://svc:***@db/seat',
      nested: { urls: ['http://u:***@x'] },
    });
    expect(String((lines[0]?.err as { message: string }).message)).toContain('postgres://a:***@h/d');
    expect(lines[1]?.msg).toBe('plain http://u:***@x/y');
  });
});
