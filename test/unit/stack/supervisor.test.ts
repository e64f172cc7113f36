import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../lib/logger.js';
import { sleep } from '../../../lib/wait.js';
import { Supervisor, type Supervised } from '../../../stack/supervisor.js';

const logger = createLogger({ name: 'supervisor-test', level: 'silent' });
const fast = { intervalMs: 5, policy: { backoffBaseMs: 60, backoffMaxMs: 60, stableAfterMs: 10_000 } };

/** A process in memory: `die()` kills it, the supervisor's start brings it back after `startMs`. */
function fakePart(name: string, startMs = 0) {
  const part = {
    running: true,
    starts: [] as number[],
    fail: false,
    die() {
      part.running = false;
    },
  };
  const supervised: Supervised = {
    name,
    alive: () => part.running,
    async start() {
      part.starts.push(Date.now());
      await sleep(startMs);
      if (part.fail) throw new Error('refused to start');
      part.running = true;
    },
  };
  return { part, supervised };
}

async function until(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(5);
  }
}

describe('Supervisor', () => {
  it('starts a part that died again at once, and records it', async () => {
    const supervisor = new Supervisor(logger, fast);
    const { part, supervised } = fakePart('consumer');
    expect(supervisor.watch(supervised)).toBe(true);
    supervisor.start();
    const diedAt = Date.now();
    part.die();
    await until(() => part.running);
    await supervisor.stop();
    expect(part.starts).toHaveLength(1);
    expect(part.starts[0]! - diedAt).toBeLessThan(1000);
    expect(supervisor.restarts()).toEqual([expect.objectContaining({ name: 'consumer', cause: 'died', delayMs: 0 })]);
    expect(supervisor.restarts()[0]!.servingAt).toBeDefined();
  });

  it('backs off a part that dies again right after its start', async () => {
    const supervisor = new Supervisor(logger, fast);
    const { part, supervised } = fakePart('connect');
    supervisor.watch(supervised);
    supervisor.start();
    part.die();
    await until(() => part.running);
    part.die();
    await until(() => part.running);
    await supervisor.stop();
    expect(supervisor.restarts().map((r) => r.delayMs)).toEqual([0, 60]);
  });

  it('leaves a held part down, and starts it when it is released', async () => {
    const supervisor = new Supervisor(logger, fast);
    const { part, supervised } = fakePart('kafka', 20);
    supervisor.watch(supervised);
    supervisor.start();
    supervisor.hold('kafka');
    part.die();
    await sleep(100);
    expect(part.starts).toHaveLength(0);
    await supervisor.release('kafka');
    expect(part.running).toBe(true);
    expect(supervisor.restarts()).toEqual([expect.objectContaining({ name: 'kafka', cause: 'released' })]);
    expect(part.starts).toHaveLength(1);
    await supervisor.stop();
  });

  it('says which part did not come back on release, and keeps trying', async () => {
    const supervisor = new Supervisor(logger, fast);
    const { part, supervised } = fakePart('registry');
    supervisor.watch(supervised);
    supervisor.start();
    supervisor.hold('registry');
    part.die();
    part.fail = true;
    await expect(supervisor.release('registry')).rejects.toThrow('registry did not come back: refused to start');
    part.fail = false;
    await until(() => part.running);
    await supervisor.stop();
    expect(part.starts.length).toBe(2);
    // Its next start is still the drill's, after a pause: not a death of its own.
    expect(supervisor.restarts().map((r) => [r.cause, r.delayMs])).toEqual([
      ['released', 0],
      ['released', 60],
    ]);
  });

  it('drops a start waiting out its pause when the part is held meanwhile, or the supervisor stops', async () => {
    const supervisor = new Supervisor(logger, fast);
    const { part, supervised } = fakePart('seat-db');
    supervisor.watch(supervised);
    supervisor.start();
    part.die();
    await until(() => part.running);
    part.die(); // again at once: its start waits 60 ms
    await until(() => supervisor.restarts().length === 1 && part.starts.length === 1);
    await sleep(20);
    supervisor.hold('seat-db');
    await sleep(100);
    expect(part.running).toBe(false);
    expect(part.starts).toHaveLength(1);
    await supervisor.stop();
  });

  it('does not supervise a part that is down when it is watched, nor start anything while paused', async () => {
    const supervisor = new Supervisor(logger, fast);
    const down = fakePart('postgres');
    down.part.die();
    expect(supervisor.watch(down.supervised)).toBe(false);
    const { part, supervised } = fakePart('sweeper');
    supervisor.watch(supervised);
    supervisor.start();
    await supervisor.pause();
    part.die();
    await sleep(100);
    expect(part.starts).toHaveLength(0);
    supervisor.resume();
    await until(() => part.running);
    await supervisor.stop();
    expect(down.part.starts).toHaveLength(0);
  });
});
