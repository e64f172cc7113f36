/**
 * An SMTP server on loopback that behaves like an email provider rather than a sink: each message
 * is answered `acceptDelayMs` after its DATA ends (a timer per message, so connections wait side by
 * side), connections past `maxConnections` are refused with 421, and with throttling on, messages
 * over the rate are refused with 451 (the rules: ./throttle.ts). It counts what it accepted and
 * refused and keeps the Message-ID of every accepted message. Nothing is logged per message.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';
import { MessageTally, type ProviderStats } from './tally.js';
import { connectionRefusal, messageRefusal, openGate, type RateGate, type Refusal } from './throttle.js';

export interface ProviderOptions {
  /** 0 lets the system pick a free port. */
  port: number;
  /** How long after its DATA ends a message is accepted. */
  acceptDelayMs: number;
  /** Connections open at once; one more is refused with 421. */
  maxConnections: number;
  /** Messages per second; undefined accepts every message (no throttling). */
  ratePerSecond?: number;
}

export interface Provider {
  /** The SMTP port it listens on (127.0.0.1). */
  port: number;
  stats(): ProviderStats;
  /** The Message-ID of every accepted message, in the order accepted, repeats included. */
  messageIds(): readonly string[];
  /** Throttling on at `ratePerSecond` (a full bucket), or off with undefined. */
  setThrottle(ratePerSecond: number | undefined): void;
  setAcceptDelay(ms: number): void;
  /** Forgets the counts and the Message-IDs; the settings stay. */
  reset(): void;
  /**
   * Answers the messages waiting for their delay (anything new meanwhile gets 421), then stops
   * listening and closes every connection with 421.
   */
  close(): Promise<void>;
}

/** How long open connections get after the last message was answered, before the server closes them with 421. */
const CLOSE_GRACE_MS = 100;

/** How much of a message is read for its Message-ID: the head, up to this many characters. */
const HEAD_LIMIT = 16_384;

const MESSAGE_ID = /^message-id:\s*<?([^>\r\n]+)>?/im;

/** The answer to a connection or a message that arrives while the provider closes: not counted as a refusal. */
const SHUTTING_DOWN: Refusal = { code: 421, text: 'Shutting down, try again later' };

function smtpError(refusal: Refusal): Error {
  return Object.assign(new Error(refusal.text), { responseCode: refusal.code });
}

/** Reads a message to its end, keeping only its head; resolves with the Message-ID (or undefined). */
function readMessageId(stream: SMTPServerDataStream): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    let head = '';
    let headDone = false;
    stream.on('data', (chunk: Buffer) => {
      if (headDone) return;
      head += chunk.toString('utf8');
      const end = head.indexOf('\r\n\r\n');
      if (end >= 0 || head.length >= HEAD_LIMIT) {
        head = head.slice(0, end >= 0 ? end : HEAD_LIMIT);
        headDone = true;
      }
    });
    stream.on('end', () => resolve(MESSAGE_ID.exec(head)?.[1]));
    stream.on('error', reject);
  });
}

export async function startProvider(options: ProviderOptions): Promise<Provider> {
  const now = () => performance.now();
  const tally = new MessageTally();
  const admitted = new Set<string>();
  const waiting = new Set<Promise<void>>();
  let acceptDelayMs = options.acceptDelayMs;
  let gate: RateGate | undefined =
    options.ratePerSecond === undefined ? undefined : openGate(options.ratePerSecond, now());
  let closing = false;

  /** Answers an accepted message after the delay; the answer is what the callback sends. */
  const acceptLater = (messageId: string | undefined, answer: () => void): void => {
    tally.started();
    const accepted = new Promise<void>((resolve) => {
      setTimeout(() => {
        tally.accepted(messageId);
        answer();
        resolve();
      }, acceptDelayMs);
    });
    waiting.add(accepted);
    void accepted.then(() => waiting.delete(accepted));
  };

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    disableReverseLookup: true,
    closeTimeout: CLOSE_GRACE_MS,
    logger: false,
    // Not smtp-server's maxClients: it answers 421 as well, but before any handler runs, so the
    // refusal could not be counted. A connection counts from its greeting to its close.
    onConnect(session, callback) {
      if (closing) return callback(smtpError(SHUTTING_DOWN));
      const refusal = connectionRefusal(admitted.size, options.maxConnections);
      if (refusal !== undefined) {
        tally.refused(refusal.code);
        return callback(smtpError(refusal));
      }
      admitted.add(session.id);
      callback();
    },
    onClose(session) {
      admitted.delete(session.id);
    },
    onData(stream, _session, callback) {
      readMessageId(stream).then(
        (messageId) => {
          if (closing) return callback(smtpError(SHUTTING_DOWN));
          const refusal = gate === undefined ? undefined : messageRefusal(gate, now());
          if (refusal !== undefined) {
            tally.refused(refusal.code);
            return callback(smtpError(refusal));
          }
          acceptLater(messageId, () => callback());
        },
        (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
      );
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });

  return {
    port: (server.server.address() as AddressInfo).port,
    stats: () => tally.stats(admitted.size),
    messageIds: () => tally.messageIds(),
    setThrottle(ratePerSecond) {
      gate = ratePerSecond === undefined ? undefined : openGate(ratePerSecond, now());
    },
    setAcceptDelay(ms) {
      acceptDelayMs = ms;
    },
    reset: () => tally.reset(),
    async close() {
      closing = true;
      await Promise.all(waiting);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
