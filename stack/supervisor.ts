/**
 * The native stack's supervisor: it watches the stack's components and the programs started
 * beside them, and starts any that dies again at once (stack/restart-policy.ts: a crash loop backs
 * off), the way systemd or Kubernetes would. `npm run stack -- supervise` runs it for the stack;
 * the rehearsal runs it for the stack and its programs, and its drills take their victim out of
 * supervision (`hold`) while it has to stay down, then give it back (`release`), which starts it.
 */
import type { Logger } from '../lib/logger.js';
import { errorMessage } from '../lib/errors.js';
import { waitFor } from '../lib/wait.js';
import type { Component } from './component.js';
import { RESTART_POLICY, type RestartHistory, type RestartPolicy, restartAfterDeath } from './restart-policy.js';

/** A process the supervisor keeps running. */
export interface Supervised {
  name: string;
  /** Cheap and synchronous: the supervisor asks every poll. */
  alive(): boolean;
  /** Starts it and resolves once it serves (rejects when it did not come up). */
  start(): Promise<void>;
}

/** One start the supervisor made, for logs and reports. */
export interface SupervisedRestart {
  name: string;
  /** `died`: seen dead under supervision (a crash); `released`: given back down by whoever held it (a drill). */
  cause: 'died' | 'released';
  /** When it was seen dead (or, after a hold, released). */
  seenDeadAt: number;
  delayMs: number;
  /** When it served again; absent when the start failed. */
  servingAt?: number;
  error?: string;
}

interface Watched {
  part: Supervised;
  history: RestartHistory;
  held: boolean;
  starting: Promise<void> | undefined;
}

export class Supervisor {
  readonly #watched = new Map<string, Watched>();
  readonly #restarts: SupervisedRestart[] = [];
  readonly #logger: Logger;
  readonly #policy: RestartPolicy;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #paused = false;

  constructor(logger: Logger, options: { policy?: RestartPolicy; intervalMs?: number } = {}) {
    this.#logger = logger.child({ supervisor: true });
    this.#policy = options.policy ?? RESTART_POLICY;
    this.#intervalMs = options.intervalMs ?? 250;
  }

  /**
   * Keeps `part` running from now on. Only a part that runs now: one that is down on purpose (a
   * former primary after a failover) is not started behind its owner's back.
   */
  watch(part: Supervised): boolean {
    if (!part.alive()) {
      this.#logger.warn({ part: part.name }, 'not running, so not supervised');
      return false;
    }
    this.#watched.set(part.name, {
      part,
      history: { crashLoop: 0, startedAt: Date.now() },
      held: false,
      starting: undefined,
    });
    return true;
  }

  start(): void {
    // Unref'd: the supervisor never keeps a process alive by itself (its owner decides when to end).
    this.#timer ??= setInterval(() => this.#poll(), this.#intervalMs).unref();
  }

  /** Stops watching; waits for the starts under way. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await Promise.allSettled([...this.#watched.values()].map((w) => w.starting));
  }

  /** Whatever happens meanwhile, nothing is started until `resume` (someone else is bringing parts back). */
  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
  }

  /** Out of supervision until `release`: a drill keeps its victim down. */
  hold(name: string): void {
    this.#get(name).held = true;
  }

  /**
   * Back under supervision, and started at once when down (a drill's victim is not a crash loop).
   * Resolves when it serves; rejects, naming the part, when it did not come up (the supervisor then
   * keeps trying, backing off).
   */
  async release(name: string): Promise<void> {
    const watched = this.#get(name);
    await watched.starting;
    watched.held = false;
    if (watched.part.alive()) return;
    watched.history = { crashLoop: 0, startedAt: 0 };
    await this.#restart(watched, Date.now(), 0, 'released');
  }

  restarts(): readonly SupervisedRestart[] {
    return this.#restarts;
  }

  #get(name: string): Watched {
    const watched = this.#watched.get(name);
    if (watched === undefined) throw new Error(`the supervisor does not watch ${name}`);
    return watched;
  }

  #poll(): void {
    if (this.#paused) return;
    const now = Date.now();
    for (const watched of this.#watched.values()) {
      if (watched.held || watched.starting !== undefined || watched.part.alive()) continue;
      const decision = restartAfterDeath(watched.history, now, this.#policy);
      watched.history = decision.history;
      this.#logger.warn(
        { part: watched.part.name, inMs: decision.delayMs, crashLoop: decision.history.crashLoop },
        decision.delayMs === 0
          ? 'died: starting it again now'
          : 'died again soon after its start: starting it again after a pause',
      );
      this.#restart(watched, now, decision.delayMs, 'died').catch(() => undefined);
    }
  }

  #restart(watched: Watched, seenDeadAt: number, delayMs: number, cause: SupervisedRestart['cause']): Promise<void> {
    const restart: SupervisedRestart = { name: watched.part.name, cause, seenDeadAt, delayMs };
    this.#restarts.push(restart);
    const starting = (async () => {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      try {
        await watched.part.start();
        restart.servingAt = Date.now();
        this.#logger.info(
          { part: watched.part.name, seconds: (restart.servingAt - seenDeadAt) / 1000 },
          'serving again',
        );
      } catch (err) {
        restart.error = errorMessage(err);
        this.#logger.error({ part: watched.part.name, err }, 'did not come back; trying again');
        throw new Error(`${watched.part.name} did not come back: ${restart.error}`, { cause: err });
      } finally {
        watched.history.startedAt = Date.now();
        watched.starting = undefined;
      }
    })();
    watched.starting = starting;
    return starting;
  }
}

/**
 * A stack component under supervision: alive while our process runs (its pid file and command
 * line), started again by its own launch (retried while Postgres refuses: the killed server's
 * orphaned backends may still hold its shared memory), then waited for until it answers its
 * protocol.
 */
export function supervisedComponent(component: Component, backTimeoutMs = 180_000): Supervised {
  return {
    name: component.name,
    alive: () => component.pid() !== undefined,
    async start() {
      await waitFor(
        async () => {
          try {
            await component.launch();
            return true;
          } catch (err) {
            if (component.name !== 'postgres') throw err;
            return false;
          }
        },
        { timeoutMs: 60_000, intervalMs: 1000, description: `${component.name} to start again` },
      );
      await waitFor(() => component.healthy(), {
        timeoutMs: backTimeoutMs,
        intervalMs: 250,
        description: `${component.name} to answer again (log: ${component.logFile})`,
      });
    },
  };
}
