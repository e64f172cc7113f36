import { afterEach, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FORCED_EXIT_CODE, GRACEFUL_DEADLINE_MS, Releasers, onShutdownSignals } from '../../../lib/shutdown.js';
import { projectRoot } from '../../../stack/config.js';
import { waitFor } from '../../../lib/wait.js';
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

describe('Releasers.current', () => {
  it('names the cleanup running, and nothing once all are done', async () => {
    const releasers = new Releasers(captureLogs('silent').logger);
    const seen: (string | undefined)[] = [];
    releasers.add('pool', () => {
      seen.push(releasers.current);
    });
    releasers.add('kafka consumer', async () => {
      seen.push(releasers.current);
    });
    expect(releasers.current).toBeUndefined();
    await releasers.releaseAll();
    expect(seen).toEqual(['kafka consumer', 'pool']);
    expect(releasers.current).toBeUndefined();
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

  it('exits with 1 when the graceful shutdown outlasts its deadline, naming what it still waits for', async () => {
    const exits: number[] = [];
    const logs = captureLogs('warn');
    unsubscribe = onShutdownSignals({
      logger: logs.logger,
      graceful: () => new Promise<void>(() => undefined), // a leave that never answers
      signals: [signal],
      exit: (code) => exits.push(code),
      deadlineMs: 20,
      pending: () => 'kafka consumer',
    });
    process.emit(signal, signal);
    await waitFor(() => exits.length > 0, { timeoutMs: 2_000, description: 'the deadline' });
    expect(exits).toEqual([1]);
    expect(logs.lines.map((line) => line.msg)).toEqual([
      'graceful shutdown did not finish within 0.02 s (still waiting for: kafka consumer); exiting now',
    ]);
  });

  it('does not exit when the graceful shutdown finishes before its deadline', async () => {
    const exits: number[] = [];
    unsubscribe = onShutdownSignals({
      logger: captureLogs('silent').logger,
      graceful: async () => undefined,
      signals: [signal],
      exit: (code) => exits.push(code),
      deadlineMs: 20,
    });
    process.emit(signal, signal);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(exits).toEqual([]);
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

describe('the graceful deadline in the docs', () => {
  it('is the one the programs use', () => {
    const seconds = `${GRACEFUL_DEADLINE_MS / 1000} s`;
    for (const doc of ['consumers.md', 'design-decisions.md', 'writing-a-consumer.md', 'scheduled-jobs.md']) {
      const text = readFileSync(join(projectRoot, 'docs', doc), 'utf8').replace(/\s+/g, ' ');
      expect(text, doc).toMatch(new RegExp(`(still running after|given up after|still going after) ${seconds}`));
    }
  });

  it("is shorter than every Kubernetes program's grace before SIGKILL, so the program says why first", () => {
    const dir = join(projectRoot, 'deploy', 'kubernetes', 'manifests');
    const graces = readdirSync(dir)
      .filter((name) => name.endsWith('.yaml'))
      .flatMap((name) =>
        [...readFileSync(join(dir, name), 'utf8').matchAll(/terminationGracePeriodSeconds: (\d+)/g)].map((m) => ({
          name,
          ms: Number(m[1]) * 1000,
        })),
      );
    expect(graces.length).toBeGreaterThan(0);
    for (const grace of graces) expect(GRACEFUL_DEADLINE_MS, grace.name).toBeLessThan(grace.ms);
  });
});
