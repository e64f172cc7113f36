/**
 * The confirmation email's SMTP password never crosses an unencrypted connection: against a real
 * SMTP server on loopback that offers no STARTTLS (as when a network strips it from the server's
 * answer), a transport with a password sends no AUTH and no email, and the failure says why; a
 * password with TLS explicitly off is refused as configuration. The local sink, without a
 * password, still gets its email in plain text.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confirmationEmailSettings } from '../../../consumers/confirmation-email/consumer.js';
import {
  createEmailSender,
  sendConfirmation,
  type SmtpSettings,
} from '../../../consumers/confirmation-email/send-confirmation.js';
import type { CatalogueEvent } from '../../../consumers/payloads.js';
import { parseSettings } from '../../../lib/settings.js';

const auths: string[] = [];
const delivered: string[] = [];
let server: SMTPServer;
let port = 0;

beforeAll(async () => {
  server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      auths.push(`${auth.username ?? ''}:${auth.password ?? ''}`);
      callback(null, { user: auth.username });
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        delivered.push(Buffer.concat(chunks).toString('utf8'));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function settings(env: Record<string, string>): SmtpSettings {
  return parseSettings(confirmationEmailSettings, {
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: String(port),
    SMTP_TIMEOUT_MS: '5000',
    SMTP_CONCURRENCY: '1',
    CONSUMER_DATABASE_URL: 'postgres://consumer@127.0.0.1:1/unused',
    ...env,
  });
}

function event(id: string): CatalogueEvent<'orderConfirmed'> {
  return {
    id,
    payload: {
      order_id: `o-${id}`,
      show_id: 's-1',
      seat_ids: ['A1'],
      total_cents: 1000,
      currency: 'EUR',
      buyer_email: 'buyer@example.com',
    },
  } as unknown as CatalogueEvent<'orderConfirmed'>;
}

describe('a server that offers no STARTTLS', () => {
  it('gets no password and no email from a transport with a password; the error says why', async () => {
    const transport = createEmailSender(settings({ SMTP_USER: 'mailer', SMTP_PASSWORD: 'hunter2' }));
    try {
      await expect(sendConfirmation(transport, event('with-password'))).rejects.toThrow(
        /could not be encrypted \(STARTTLS refused or failed\).*nothing was sent, the password neither/,
      );
    } finally {
      transport.close();
    }
    expect(auths).toEqual([]);
    expect(delivered.filter((raw) => raw.includes('o-with-password'))).toEqual([]);
  });

  it('still gets the email, in plain text, from a transport without a password (the local sink)', async () => {
    const transport = createEmailSender(settings({}));
    try {
      await sendConfirmation(transport, event('no-password'));
    } finally {
      transport.close();
    }
    expect(delivered.filter((raw) => raw.includes('o-no-password'))).toHaveLength(1);
  });
});

describe('configuration', () => {
  it('refuses a password with TLS explicitly off, naming the fix', () => {
    expect(() =>
      createEmailSender(settings({ SMTP_USER: 'mailer', SMTP_PASSWORD: 'hunter2', SMTP_REQUIRE_TLS: 'no' })),
    ).toThrow(/SMTP_PASSWORD is set but SMTP_REQUIRE_TLS=no .*unset SMTP_REQUIRE_TLS .* or set SMTP_SECURE=true/);
  });
});
