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

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  add(name: string, release: Release): void {
    this.#stack.push({ name, release });
  }

  get size(): number {
    return this.#stack.length;
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
      try {
        await entry.release();
        this.#logger.debug({ releaser: entry.name }, 'released');
      } catch (err) {
        errors.push(err);
        this.#logger.error(
          { err, releaser: entry.name },
          `cleanup of ${entry.name} failed; continuing with the others`,
        );
      }
    }
    return errors;
  }
}

export const FORCED_EXIT_CODE = 130;

export interface ShutdownSignalOptions {
  logger: Logger;
  /** Stops taking work, drains, releases. Runs once, on the first signal. */
  graceful: () => Promise<void>;
  signals?: readonly NodeJS.Signals[];
  /** Injectable for tests; process.exit by default. */
  exit?: (code: number) => void;
}

/**
 * First SIGINT/SIGTERM runs `graceful` (a failure sets process.exitCode = 1); a
 * second one exits at once with code 130. Returns a function that unsubscribes.
 */
export function onShutdownSignals(options: ShutdownSignalOptions): () => void {
  const { logger, graceful, signals = ['SIGINT', 'SIGTERM'], exit = (code: number) => process.exit(code) } = options;
  let received = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    received += 1;
    if (received > 1) {
      logger.warn({ signal }, `second ${signal}: exiting now without finishing the graceful shutdown`);
      exit(FORCED_EXIT_CODE);
      return;
    }
    logger.info({ signal }, `${signal} received: shutting down gracefully (send it again to force)`);
    Promise.resolve()
      .then(graceful)
      .then(
        () => logger.info('graceful shutdown finished'),
        (err: unknown) => {
          process.exitCode = 1;
          logger.error({ err }, 'graceful shutdown failed');
        },
      );
  };
  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}
