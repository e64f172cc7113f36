/**
 * The order confirmation email over SMTP. The ce_id is the Message-ID (the idempotency key a
 * provider or the buyer's mail client can deduplicate on). A 5xx answer about the message or its
 * recipient is the message's own fault (a data error: poison after the delivery limit); every other
 * failure (4xx, connection, timeout, authentication) is the infrastructure's and is retried.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import { errorMessage } from '../../lib/errors.js';
import { ConfigError } from '../../lib/settings.js';
import { PoisonError, TransientError } from '../runtime/failures.js';
import type { OrderConfirmed } from '../../events/catalogue.js';
import type { CatalogueEvent } from '../payloads.js';
import { SendGate } from './send-gate.js';

export interface SmtpSettings {
  smtpHost: string;
  smtpPort: number;
  smtpSecure: boolean;
  /** SMTP_REQUIRE_TLS; absent: auto. */
  smtpRequireTls?: 'auto' | 'yes' | 'no';
  smtpUser: string;
  smtpPassword: string;
  smtpTimeoutMs: number;
  mailFrom: string;
  /** Sends in flight at most, over as many pooled connections. */
  sendConcurrency: number;
  /** SMTP_RATE_LIMIT: sends per second at most; 0 or absent: unpaced until the provider throttles. */
  smtpRateLimit?: number;
}

/** One process's way out: the pooled transport, the gate every send goes through, the From address. */
export interface EmailSender {
  transport: Transporter;
  gate: SendGate;
  mailFrom: string;
  /** Sends in flight at most: the lanes a group of orders is sent over. */
  concurrency: number;
  close(): void;
}

/**
 * The longest a send waits for the pace's next turn: below the consumers' heartbeat interval, so
 * lanes that wait never keep the group from hearing of the member.
 */
const PACE_MAX_WAIT_MS = 1_000;

export function createEmailSender(settings: SmtpSettings): EmailSender {
  const transport = createSmtpTransport(settings);
  return {
    transport,
    gate: new SendGate({
      maxInFlight: settings.sendConcurrency,
      ratePerSecond: settings.smtpRateLimit ?? 0,
      maxWaitMs: PACE_MAX_WAIT_MS,
    }),
    mailFrom: settings.mailFrom,
    concurrency: settings.sendConcurrency,
    close: () => transport.close(),
  };
}

/** 5xx answers that are about our credentials or the server, not the message (RFC 4954: 530, 534, 535, 538). */
const SERVER_SIDE_5XX = new Set([530, 534, 535, 538]);

/**
 * The answers providers give when pushed (421: too many connections or messages, closing; 451:
 * try again later, a rate limit): not a failure of the message or the provider, a request to slow
 * down. A greeting of 421 (the connection limit) carries the code too.
 */
const THROTTLE_CODES = new Set([421, 451]);

/** A group an answer of those held is tried again this soon, at the lowered pace (not after a growing backoff). */
const THROTTLED_RETRY_AFTER_MS = 1_000;

export function messageIdFor(eventId: string): string {
  return `<${eventId}@events.stagefront>`;
}

/**
 * Whether the connection must be encrypted before anything else is said (STARTTLS required): always
 * when a password is set, so a network that strips STARTTLS from the server's answer gets no
 * password; with SMTP_SECURE the connection is TLS from the first byte anyway.
 */
function requiresStartTls(settings: Pick<SmtpSettings, 'smtpSecure' | 'smtpRequireTls' | 'smtpPassword'>): boolean {
  if (settings.smtpSecure) return false;
  const choice = settings.smtpRequireTls ?? 'auto';
  return choice === 'yes' || (choice === 'auto' && settings.smtpPassword !== '');
}

/** The settings' contradiction, if any: a password with TLS explicitly off. */
function smtpTlsProblem(
  settings: Pick<SmtpSettings, 'smtpSecure' | 'smtpRequireTls' | 'smtpPassword'>,
): string | undefined {
  if (settings.smtpPassword === '' || settings.smtpSecure || settings.smtpRequireTls !== 'no') return undefined;
  return 'SMTP_PASSWORD is set but SMTP_REQUIRE_TLS=no (with SMTP_SECURE=false) lets it go over an unencrypted connection: unset SMTP_REQUIRE_TLS (auto requires STARTTLS with a password) or set SMTP_SECURE=true for TLS from the first byte.';
}

function createSmtpTransport(settings: SmtpSettings): Transporter {
  const problem = smtpTlsProblem(settings);
  if (problem !== undefined) throw new ConfigError('confirmation-email', [problem]);
  return nodemailer.createTransport({
    host: settings.smtpHost,
    port: settings.smtpPort,
    secure: settings.smtpSecure,
    requireTLS: requiresStartTls(settings),
    // One SMTP connection per email costs a handshake each: at an on-sale, keep them open, one per
    // send in flight (the gate never has more in flight than that).
    pool: true,
    maxConnections: settings.sendConcurrency,
    // nodemailer's default (100) opens a new connection every 100 messages: at 1,000 emails/s that
    // is ten handshakes a second, each a send's latency or more.
    maxMessages: 1_000,
    ...(settings.smtpUser === '' ? {} : { auth: { user: settings.smtpUser, pass: settings.smtpPassword } }),
    connectionTimeout: settings.smtpTimeoutMs,
    greetingTimeout: settings.smtpTimeoutMs,
    socketTimeout: settings.smtpTimeoutMs,
  });
}

function formatCents(cents: number, currency: string): string {
  return `${(cents / 100).toFixed(2)} ${currency}`;
}

function confirmationText(order: OrderConfirmed): string {
  return [
    `Thank you for your order ${order.order_id}.`,
    '',
    `Show: ${order.show_id}`,
    `Seats: ${order.seat_ids.join(', ')}`,
    `Total: ${formatCents(order.total_cents, order.currency)}`,
  ].join('\n');
}

/** A property of what nodemailer threw (its errors carry `code` and `responseCode`). */
function propertyOf(err: unknown, name: 'code' | 'responseCode'): unknown {
  return typeof err === 'object' && err !== null ? Reflect.get(err, name) : undefined;
}

function classifySmtpFailure(err: unknown): Error {
  const code = propertyOf(err, 'responseCode');
  const responseCode = typeof code === 'number' ? code : undefined;
  // Before the 5xx rule: a refused STARTTLS answers 5xx too, but it is about the server, not the message.
  if (propertyOf(err, 'code') === 'ETLS') {
    return new TransientError(
      'smtp_unavailable',
      `the SMTP connection could not be encrypted (STARTTLS refused or failed) and this consumer requires it (SMTP_REQUIRE_TLS; auto with SMTP_PASSWORD set): nothing was sent, the password neither; check the server's STARTTLS and certificate, or a network stripping STARTTLS: ${errorMessage(err)}`,
      { cause: err },
    );
  }
  if (responseCode !== undefined && THROTTLE_CODES.has(responseCode)) {
    return new TransientError('smtp_throttled', `the SMTP provider asked us to slow down: ${errorMessage(err)}`, {
      cause: err,
      // A 4xx: the provider did not take the message, so nothing left the building.
      details: { retryAfterMs: THROTTLED_RETRY_AFTER_MS, notPerformed: true },
    });
  }
  if (responseCode !== undefined && responseCode >= 500 && responseCode < 600 && !SERVER_SIDE_5XX.has(responseCode)) {
    return new PoisonError('data error', `the SMTP server refused this message for good: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  return new TransientError('smtp_unavailable', `the SMTP server did not take the message: ${errorMessage(err)}`, {
    cause: err,
  });
}

/** Sends the order's confirmation through the sender's gate (its pace and in-flight limit). */
export function sendConfirmation(sender: EmailSender, event: CatalogueEvent<'orderConfirmed'>): Promise<void> {
  return sender.gate.send(() => sendOnce(sender.transport, sender.mailFrom, event));
}

async function sendOnce(transport: Transporter, from: string, event: CatalogueEvent<'orderConfirmed'>): Promise<void> {
  const order = event.payload;
  try {
    await transport.sendMail({
      from,
      to: order.buyer_email,
      subject: `Your Stagefront order ${order.order_id}`,
      text: confirmationText(order),
      messageId: messageIdFor(event.id),
      headers: { 'X-Stagefront-Event-Id': event.id },
    });
  } catch (err) {
    throw classifySmtpFailure(err);
  }
}
