/**
 * The order confirmation email over SMTP. The ce_id is the Message-ID (the idempotency key a
 * provider or the buyer's mail client can deduplicate on). A 5xx answer about the message or its
 * recipient is the message's own fault (a data error: poison after the delivery limit); every other
 * failure (4xx, connection, timeout, authentication) is the infrastructure's and is retried.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { OrderConfirmed } from '../../events/catalogue.js';
import { errorMessage } from '../../lib/errors.js';
import { PoisonError, TransientError } from '../runtime/failures.js';
import type { ConsumedEvent } from '../runtime/types.js';

export interface SmtpSettings {
  smtpHost: string;
  smtpPort: number;
  smtpSecure: boolean;
  smtpUser: string;
  smtpPassword: string;
  smtpTimeoutMs: number;
  mailFrom: string;
  sendConcurrency: number;
}

/** 5xx answers that are about our credentials or the server, not the message (RFC 4954: 530, 534, 535, 538). */
const SERVER_SIDE_5XX = new Set([530, 534, 535, 538]);

export function messageIdFor(eventId: string): string {
  return `<${eventId}@events.stagefront>`;
}

export function createSmtpTransport(settings: SmtpSettings): Transporter {
  return nodemailer.createTransport({
    host: settings.smtpHost,
    port: settings.smtpPort,
    secure: settings.smtpSecure,
    // One SMTP connection per email costs a handshake each; at an on-sale, keep a few open.
    pool: true,
    maxConnections: settings.sendConcurrency,
    ...(settings.smtpUser === '' ? {} : { auth: { user: settings.smtpUser, pass: settings.smtpPassword } }),
    connectionTimeout: settings.smtpTimeoutMs,
    greetingTimeout: settings.smtpTimeoutMs,
    socketTimeout: settings.smtpTimeoutMs,
  });
}

function formatCents(cents: number, currency: string): string {
  return `${(cents / 100).toFixed(2)} ${currency}`;
}

export function confirmationText(order: OrderConfirmed): string {
  return [
    `Thank you for your order ${order.order_id}.`,
    '',
    `Show: ${order.show_id}`,
    `Seats: ${order.seat_ids.join(', ')}`,
    `Total: ${formatCents(order.total_cents, order.currency)}`,
  ].join('\n');
}

function classifySmtpFailure(err: unknown): Error {
  const { responseCode } = err as { responseCode?: number };
  if (responseCode !== undefined && responseCode >= 500 && responseCode < 600 && !SERVER_SIDE_5XX.has(responseCode)) {
    return new PoisonError('data error', `the SMTP server refused this message for good: ${errorMessage(err)}`, { cause: err });
  }
  return new TransientError('smtp_unavailable', `the SMTP server did not take the message: ${errorMessage(err)}`, { cause: err });
}

export async function sendConfirmation(transport: Transporter, from: string, event: ConsumedEvent): Promise<void> {
  const order = event.payload as OrderConfirmed;
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
