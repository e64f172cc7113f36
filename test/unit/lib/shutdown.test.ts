import { afterEach, describe, expect, it } from 'vitest';
import { FORCED_EXIT_CODE, Releasers, onShutdownSignals } from '../../../lib/shutdown.js';
import { captureLogs } from './log-capture.js';

describe('Releasers', () => {
  it('runs cleanups in reverse order of registration', async () => {
    const order: string[] = [];
    const releasers = new Releasers(captureLogs('silent').logger);
    releasers.add('pool', () => {
      order.push('pool');
    });
    releasers.add('consumer', async () => {
      order.push('consumer');
    });
    releasers.add('http', () => {
      order.push('http');
    });

    expect(await releasers.releaseAll()).toEqual([]);
    expect(order).toEqual(['http', 'consumer', 'pool']);
  });

  it('logs a failing cleanup and still runs the others', async () => {
    const { logger, lines } = captureLogs('info');
    const order: string[] = [];
    const failure = new Error('consumer.disconnect timed out');
    const releasers = new Releasers(logger);
    releasers.add('pool', () => {
      order.push('pool');
    });
    releasers.add('consumer', async () => {
      throw failure;
    });
    releasers.add('http', () => {
      order.push('http');
    });

    expect(await releasers.releaseAll()).toEqual([failure]);
    expect(order).toEqual(['http', 'pool']);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'error', releaser: 'consumer' });
    expect(JSON.stringify(lines[0])).toContain('consumer.disconnect timed out');
  });

  it('runs each cleanup once', async () => {
    let runs = 0;
    const releasers = new Releasers(captureLogs('silent').logger);
    releasers.add('pool', () => {
      runs += 1;
    });
    await releasers.releaseAll();
    await releasers.releaseAll();
    expect(runs).toBe(1);
    expect(releasers.size).toBe(0);
  });

  it('a second release while one is under way waits for it, and the cleanups still run one at a time in order', async () => {
    const order: string[] = [];
    let finishConsumer: () => void = () => undefined;
    const releasers = new Releasers(captureLogs('silent').logger);
    releasers.add('pool', () => void order.push('pool'));
    releasers.add('consumer', () => new Promise<void>((resolve) => (finishConsumer = resolve)));
    const bySignal = releasers.releaseAll();
    const byProgram = releasers.releaseAll();
    await Promise.resolve();
    expect(order).toEqual([]);
    finishConsumer();
    await byProgram;
    expect(order).toEqual(['pool']);
    expect(await bySignal).toEqual([]);
  });
});

describe('onShutdownSignals', () => {
  // SIGUSR2 stands in for SIGINT/SIGTERM so the test runner's own handlers are not triggered.
  const signal = 'SIGUSR2';
  let unsubscribe: (() => void) | undefined;
  afterEach(() => unsubscribe?.());

  it('runs graceful on the first signal and exits with 130 on the second', async () => {
    const exits: number[] = [];
    let gracefulRuns = 0;
    unsubscribe = onShutdownSignals({
      logger: captureLogs('silent').logger,
      graceful: async () => {
        gracefulRuns += 1;
      },
      signals: [signal],
      exit: (code) => exits.push(code),
    });

    process.emit(signal, signal);
    await new Promise((resolve) => setImmediate(resolve));
    expect(gracefulRuns).toBe(1);
    expect(exits).toEqual([]);

    process.emit(signal, signal);
    expect(gracefulRuns).toBe(1);
    expect(exits).toEqual([FORCED_EXIT_CODE]);
    expect(FORCED_EXIT_CODE).toBe(130);
  });

  it('unsubscribes', () => {
    const before = process.listenerCount(signal);
    unsubscribe = onShutdownSignals({
      logger: captureLogs('silent').logger,
      graceful: async () => {},
      signals: [signal],
    });
    expect(process.listenerCount(signal)).toBe(before + 1);
    unsubscribe();
    expect(process.listenerCount(signal)).toBe(before);
  });
});
