import { describe, expect, it } from 'vitest';
import { PipelineError } from '../../../lib/errors.js';
import { isLogLevel } from '../../../lib/logger.js';
import { captureLogs } from './log-capture.js';

describe('createLogger', () => {
  it('writes one JSON object per line with time, level word, name, message and fields', () => {
    const { logger, lines } = captureLogs('info');
    logger.info({ ce_id: 'e-1', topic: 'seat', partition: 2, offset: '41' }, 'event handled');

    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      name: 'test',
      msg: 'event handled',
      ce_id: 'e-1',
      topic: 'seat',
      partition: 2,
      offset: '41',
    });
    expect(Date.parse(String(lines[0]?.time))).not.toBeNaN();
  });

  it('drops levels below its own', () => {
    const { logger, lines } = captureLogs('warn');
    logger.info('hidden');
    logger.warn('shown');
    expect(lines.map((line) => line.msg)).toEqual(['shown']);
  });

  it('serializes errors with their code and cause', () => {
    const { logger, lines } = captureLogs('info');
    const err = new PipelineError('migration_failed', 'outer', { cause: new Error('inner') });
    logger.error({ err }, 'failed');
    expect(lines[0]?.err).toMatchObject({
      type: 'PipelineError',
      message: expect.stringContaining('outer'),
      code: 'migration_failed',
    });
    expect(JSON.stringify(lines[0]?.err)).toContain('inner');
  });

  it('knows its level names', () => {
    expect(isLogLevel('debug')).toBe(true);
    expect(isLogLevel('verbose')).toBe(false);
  });
});
