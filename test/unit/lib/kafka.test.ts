// Only what needs no broker; ensureTopics and the client itself are exercised by the
// integration tests against the real Kafka.
import { describe, expect, it } from 'vitest';
import { createKafka, kafkaLogCreator, kafkaLogLevel, logLevel } from '../../../lib/kafka.js';
import { captureLogs } from './log-capture.js';

describe('kafka logging', () => {
  it('routes kafkajs log entries into the pino logger at the same level, with their fields', () => {
    const { logger, lines } = captureLogs('debug');
    const log = kafkaLogCreator(logger)(logLevel.DEBUG);
    const entry = (level: logLevel, message: string) => ({
      namespace: 'Consumer',
      level,
      label: 'X',
      log: { timestamp: '2026-01-01T00:00:00.000Z', logger: 'kafkajs', message, groupId: 'g1' },
    });

    log(entry(logLevel.ERROR, 'crash'));
    log(entry(logLevel.WARN, 'rebalancing'));
    log(entry(logLevel.INFO, 'joined'));
    log(entry(logLevel.DEBUG, 'fetch'));
    log(entry(logLevel.NOTHING, 'never'));

    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      ['error', 'crash'],
      ['warn', 'rebalancing'],
      ['info', 'joined'],
      ['debug', 'fetch'],
    ]);
    expect(lines[0]).toMatchObject({ kafkajs: 'Consumer', groupId: 'g1' });
    expect(lines[0]).not.toHaveProperty('logger');
  });

  it('asks kafkajs for no more than the logger prints', () => {
    expect(kafkaLogLevel(captureLogs('warn').logger)).toBe(logLevel.WARN);
    expect(kafkaLogLevel(captureLogs('debug').logger)).toBe(logLevel.DEBUG);
    expect(kafkaLogLevel(captureLogs('silent').logger)).toBe(logLevel.NOTHING);
  });

  it("a client reports a broker it cannot reach through the program's logger, after the retries it was given", async () => {
    const { logger, lines } = captureLogs('error');
    const kafka = createKafka({
      brokers: ['127.0.0.1:1'],
      clientId: 'lib-test',
      logger,
      retry: { retries: 1, initialRetryTime: 10, maxRetryTime: 20 },
    });
    const admin = kafka.admin();
    await expect(admin.connect()).rejects.toThrow(/ECONNREFUSED|Connection error/);
    const connectionErrors = lines.filter((line) => line.level === 'error' && line.kafkajs === 'Connection');
    expect(connectionErrors.length).toBeGreaterThan(0);
    expect(connectionErrors[0]).toMatchObject({ broker: '127.0.0.1:1', clientId: 'lib-test' });
  });
});
