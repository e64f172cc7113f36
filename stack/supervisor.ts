/**
 * The native stack's supervisor: it watches the stack's components and the programs started
 * beside them, and starts any that dies again at once (stack/restart-policy.ts: a crash loop backs
 * off), the way systemd or Kubernetes would. `npm run stack -- supervise` runs it for the stack;
 * the rehearsal runs it for the stack and its programs, and its drills take their victim out of
 * supervision (`hold`) while it has to stay down, then give it back (`release`), which starts it.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import { errorMessage } from '../lib/errors.js';
import { sleep } from '../lib/wait.js';
import type { Component } from './component.js';
import type { StackLayout } from './config.js';
import { ensureRunning } from './launcher.js';
import { isAlive, readPid } from './processes.js';
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
  /** Released by a drill and not serving yet: its further starts are the drill's, not deaths of its own. */
  released: boolean;
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
  #stopped = false;

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
      released: false,
      starting: undefined,
    });
    return true;
  }

  start(): void {
    // Unref'd: the supervisor never keeps a process alive by itself (its owner decides when to end).
    this.#timer ??= setInterval(() => this.#poll(), this.#intervalMs).unref();
  }

  /** Stops watching: a start waiting out its pause is dropped, one under way is waited for. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#settled();
  }

  /**
   * Nothing is started until `resume` (someone else is bringing parts back); resolves once the
   * starts under way are over, so that the two never start one part twice.
   */
  async pause(): Promise<void> {
    this.#paused = true;
    await this.#settled();
  }

  resume(): void {
    this.#paused = false;
  }

  /** Out of supervision until `release`: a drill keeps its victim down. A start waiting out its pause is dropped. */
  hold(name: string): void {
    this.#get(name).held = true;
  }

  /**
   * Back under supervision, and started at once when down (a drill's victim is not a crash loop).
   * Resolves when it serves; rejects, naming the part, when it did not come up (the supervisor then
   * keeps trying, backing off, and counts those starts as the drill's).
   */
  async release(name: string): Promise<void> {
    const watched = this.#get(name);
    await watched.starting?.catch(() => undefined);
    watched.held = false;
    if (this.#aliveOrUnknown(watched)) return;
    const now = Date.now();
    watched.history = restartAfterDeath({ crashLoop: 0, startedAt: now }, now, this.#policy).history;
    watched.released = true;
    await this.#restart(watched, now, 0, 'released');
  }

  restarts(): readonly SupervisedRestart[] {
    return this.#restarts;
  }

  #get(name: string): Watched {
    const watched = this.#watched.get(name);
    if (watched === undefined) throw new Error(`the supervisor does not watch ${name}`);
    return watched;
  }

  async #settled(): Promise<void> {
    await Promise.allSettled([...this.#watched.values()].map((w) => w.starting));
  }

  /** Alive, or not known this time (a pid file read while its process wrote or removed it): not dead. */
  #aliveOrUnknown(watched: Watched): boolean {
    try {
      return watched.part.alive();
    } catch (err) {
      this.#logger.warn({ part: watched.part.name, err }, 'could not tell whether it runs; asking again');
      return true;
    }
  }

  #poll(): void {
    if (this.#paused || this.#stopped) return;
    const now = Date.now();
    for (const watched of this.#watched.values()) {
      if (watched.held || watched.starting !== undefined || this.#aliveOrUnknown(watched)) continue;
      const decision = restartAfterDeath(watched.history, now, this.#policy);
      watched.history = decision.history;
      this.#logger.warn(
        { part: watched.part.name, inMs: decision.delayMs, crashLoop: decision.history.crashLoop },
        decision.delayMs === 0
          ? 'died: starting it again now'
          : 'died again soon after its start: starting it again after a pause',
      );
      const cause = watched.released ? 'released' : 'died';
      this.#restart(watched, now, decision.delayMs, cause).catch(() => undefined);
    }
  }

  #restart(watched: Watched, seenDeadAt: number, delayMs: number, cause: SupervisedRestart['cause']): Promise<void> {
    const starting = (async () => {
      try {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        // Decided before the pause: whoever held, paused or stopped the supervisor meanwhile, or a
        // part that came back by other hands, decides now.
        const byDrill = cause === 'released' && delayMs === 0;
        if (this.#stopped || (!byDrill && (this.#paused || watched.held)) || this.#aliveOrUnknown(watched)) return;
        const restart: SupervisedRestart = { name: watched.part.name, cause, seenDeadAt, delayMs };
        this.#restarts.push(restart);
        try {
          await watched.part.start();
          restart.servingAt = Date.now();
          watched.released = false;
          this.#logger.info(
            { part: watched.part.name, seconds: (restart.servingAt - seenDeadAt) / 1000 },
            'serving again',
          );
        } catch (err) {
          restart.error = errorMessage(err);
          this.#logger.error({ part: watched.part.name, err }, 'did not come back; trying again');
          throw new Error(`${watched.part.name} did not come back: ${restart.error}`, { cause: err });
        }
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
 * line), started again by the launcher's own step for one component (launched, waited for until it
 * answers its protocol, configured). Postgres is retried for a minute: the killed server's orphaned
 * backends may still hold its shared memory.
 */
export function supervisedComponent(component: Component, layout: StackLayout, logger: Logger): Supervised {
  return {
    name: component.name,
    alive: () => component.pid() !== undefined,
    async start() {
      const deadline = Date.now() + 60_000;
      for (;;) {
        try {
          await ensureRunning(component, layout, logger);
          return;
        } catch (err) {
          if (component.name !== 'postgres' || Date.now() >= deadline) throw err;
          await sleep(1000);
        }
      }
    },
  };
}

function supervisorPidFile(layout: StackLayout): string {
  return join(layout.runDir, 'supervisor.pid');
}

/** The pid of another process supervising this stack (`stack supervise`, a rehearsal), if one runs. */
function otherSupervisor(layout: StackLayout): number | undefined {
  const pid = readPid(supervisorPidFile(layout));
  return isAlive(pid) && pid !== process.pid ? pid : undefined;
}

/** The refusal of a command that would fight the supervisor of this stack (it would start again what the command stops). */
export function refuseWhileSupervised(layout: StackLayout, command: string): void {
  const pid = otherSupervisor(layout);
  if (pid !== undefined)
    throw new Error(
      `${command}: a supervisor keeps this stack running (pid ${pid}: npm run stack -- supervise, or a rehearsal) and would start again what this stops; stop it first (Ctrl-C in its terminal, or kill ${pid}), then run ${command} again`,
    );
}

/** Makes this process the stack's one supervisor; refused while another runs. Returns the release. */
export function claimSupervision(layout: StackLayout): () => void {
  refuseWhileSupervised(layout, 'supervising the stack');
  mkdirSync(layout.runDir, { recursive: true });
  const file = supervisorPidFile(layout);
  writeFileSync(file, String(process.pid));
  return () => {
    if (readPid(file) === process.pid) rmSync(file, { force: true });
  };
}
