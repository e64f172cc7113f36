import { Writable } from 'node:stream';
import { createLogger } from '../../../lib/logger.js';
import type { Logger, LogLevel } from '../../../lib/logger.js';

/** A logger whose JSON lines are kept in memory, parsed, for assertions. */
export function captureLogs(level: LogLevel = 'debug'): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { logger: createLogger({ name: 'test', level, destination }), lines };
}
