/**
 * Orderly shutdown: cleanups run in reverse order of setup (graphile-worker's
 * `withReleasers`), graceful on the first signal, forced on the second.
 */
import type { Logger } from './logger.js';

export type Release = () => void | Promise<void>;

/**
 * Cleanup functions registered as resources are set up (`add('seat pool', () => pool.end())`)
 * and run by `releaseAll()` last-registered first. A failing cleanup is logged and
 * does not stop the others. Releasing twice runs nothing the second time.
 */
export class Releasers {
  readonly #logger: Logger;
  readonly #stack: { name: string; release: Release }[] = [];
  #releasing: Promise<unknown[]> | undefined;
  #current: string | undefined;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  add(name: string, release: Release): void {
    this.#stack.push({ name, release });
  }

  get size(): number {
    return this.#stack.length;
  }

  /** The cleanup running now, if one is: what a shutdown that does not finish is waiting for. */
  get current(): string | undefined {
    return this.#current;
  }

  /**
   * Runs every cleanup, newest first; returns the errors (empty when all went well). A call while
   * a release is under way (a signal's and the program's own) waits for that one instead of
   * running the remaining cleanups beside it.
   */
  releaseAll(): Promise<unknown[]> {
    this.#releasing ??= this.#releaseInOrder().finally(() => (this.#releasing = undefined));
    return this.#releasing;
  }

  async #releaseInOrder(): Promise<unknown[]> {
    const errors: unknown[] = [];
    for (let entry = this.#stack.pop(); entry !== undefined; entry = this.#stack.pop()) {
      this.#current = entry.name;
      try {
        await entry.release();
        this.#logger.debug({ releaser: entry.name }, 'released');
      } catch (err) {
        errors.push(err);
        this.#logger.error(
          { err, releaser: entry.name },
          `cleanup of ${entry.name} failed; continuing with the others`,
        );
      } finally {
        this.#current = undefined;
      }
    }
    return errors;
  }
}

export const FORCED_EXIT_CODE = 130;

/**
 * How long a graceful shutdown begun by a signal may take before the program exits anyway (code
 * 1), naming what it was still waiting for: under Kubernetes's default grace of 30 s, so the
 * program says why before the kubelet kills it, and a stop by signal (a native stop, a test's
 * cleanup) never waits without end (a Kafka client leaving its group through a coordinator that is
 * gone can retry for longer than that). The cleanup after a failed start, or after a program ends
 * on its own, is not bounded by it.
 */
export const GRACEFUL_DEADLINE_MS = 25_000;

export interface ShutdownSignalOptions {
  logger: Logger;
  /** Stops taking work, drains, releases. Runs once, on the first signal. */
  graceful: () => Promise<void>;
  signals?: readonly NodeJS.Signals[];
  /** Injectable for tests; process.exit by default. */
  exit?: (code: number) => void;
  /** GRACEFUL_DEADLINE_MS unless given (tests). */
  deadlineMs?: number;
  /** What the shutdown is waiting for now (the cleanup running), for the deadline's message. */
  pending?: () => string | undefined;
}

/**
 * First SIGINT/SIGTERM runs `graceful` (a failure sets process.exitCode = 1); a graceful
 * shutdown still running after `deadlineMs` exits with code 1, naming what it waited for; a
 * second signal exits at once with code 130. Returns a function that unsubscribes.
 */
export function onShutdownSignals(options: ShutdownSignalOptions): () => void {
  const { logger, graceful, signals = ['SIGINT', 'SIGTERM'], exit = (code: number) => process.exit(code) } = options;
  const deadlineMs = options.deadlineMs ?? GRACEFUL_DEADLINE_MS;
  let received = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    received += 1;
    if (received > 1) {
      logger.warn({ signal }, `second ${signal}: exiting now without finishing the graceful shutdown`);
      exit(FORCED_EXIT_CODE);
      return;
    }
    logger.info({ signal }, `${signal} received: shutting down gracefully (send it again to force)`);
    const deadline = setTimeout(() => {
      const pending = options.pending?.();
      logger.error(
        { deadlineMs, pending },
        `graceful shutdown did not finish within ${deadlineMs / 1000} s${pending === undefined ? '' : ` (still waiting for: ${pending})`}; exiting now`,
      );
      exit(1);
    }, deadlineMs);
    // Not unref'd: a shutdown stuck on something Node does not track (a promise nothing will
    // settle) would otherwise end the process silently with 0; the timer is cleared once it is done.
    Promise.resolve()
      .then(graceful)
      .then(
        () => logger.info('graceful shutdown finished'),
        (err: unknown) => {
          process.exitCode = 1;
          logger.error({ err }, 'graceful shutdown failed');
        },
      )
      .finally(() => clearTimeout(deadline));
  };
  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}
