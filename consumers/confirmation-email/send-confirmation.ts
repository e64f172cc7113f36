/**
 * The order confirmation email over SMTP. The ce_id is the Message-ID (the idempotency key a
 * provider or the buyer's mail client can deduplicate on). SMTP 4xx answers and connection
 * failures are transient; a 5xx answer is the message's own fault (poison after the delivery limit).
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { OrderConfirmed } from '../../events/catalogue.js';
import { errorMessage } from '../../lib/errors.js';
import { TransientError } from '../runtime/failures.js';
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

const TRANSIENT_SMTP_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNREFUSED', 'ECONNRESET', 'EPROTOCOL']);

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

function classifySmtpFailure(err: unknown): unknown {
  const { responseCode, code } = err as { responseCode?: number; code?: string };
  const temporary = (responseCode !== undefined && responseCode >= 400 && responseCode < 500) || (responseCode === undefined && code !== undefined && TRANSIENT_SMTP_CODES.has(code));
  return temporary ? new TransientError('smtp_unavailable', `the SMTP server did not take the message: ${errorMessage(err)}`, { cause: err }) : err;
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
