/**
 * JSON-lines logging with pino. A logger is created once per program and passed
 * in to whatever needs it; no module holds a global logger.
 */
import { pino } from 'pino';
import type { DestinationStream, LevelWithSilent, Logger as PinoLogger } from 'pino';
import { redactUserInfo, withoutUserInfo } from './redact.js';

export type Logger = PinoLogger;
export type LogLevel = LevelWithSilent;

export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface CreateLoggerOptions {
  /** The program or component: "slot-monitor", "email-consumer". */
  name: string;
  level?: LogLevel;
  /** Where JSON lines go; stdout when omitted. Tests pass a stream to read them back. */
  destination?: DestinationStream;
}

/**
 * One JSON object per line: `time` (ISO 8601), `level` as a word, `name`, `msg`,
 * plus whatever fields the call adds (`ce_id`, `topic`, `partition`, `offset` …).
 * Errors logged under `err` are serialized with message, stack and code. A password in a URL
 * (message, field or error) is written as `***` (lib/redact.ts).
 */
export function createLogger({ name, level = 'info', destination }: CreateLoggerOptions): Logger {
  const options = {
    name,
    level,
    base: { name },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      level: (label: string) => ({ level: label }),
      log: (object: Record<string, unknown>) => redactUserInfo(object),
    },
    serializers: { err: redactedError, error: redactedError },
    hooks: {
      logMethod(this: PinoLogger, args: Parameters<PinoLogger['info']>, method: (...args: unknown[]) => void) {
        method.apply(
          this,
          args.map((arg: unknown) => (typeof arg === 'string' ? withoutUserInfo(arg) : arg)),
        );
      },
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

function redactedError(error: Error): Record<string, unknown> {
  // Plain data first (the serializer's objects have a prototype of their own, causes nested).
  const serialized = JSON.parse(JSON.stringify(pino.stdSerializers.err(error))) as Record<string, unknown>;
  return redactUserInfo(serialized, 8);
}

/** True when `value` is a level name `createLogger` accepts. */
export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}
