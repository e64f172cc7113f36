/**
 * JSON-lines logging with pino. A logger is created once per program and passed
 * in to whatever needs it; no module holds a global logger.
 */
import { pino } from 'pino';
import type { DestinationStream, Level, LevelWithSilent, Logger as PinoLogger } from 'pino';

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
 * Errors logged under `err` are serialized with message, stack and code.
 */
export function createLogger({ name, level = 'info', destination }: CreateLoggerOptions): Logger {
  const options = {
    name,
    level,
    base: { name },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** True when `value` is a level name `createLogger` accepts. */
export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

export type { Level };
