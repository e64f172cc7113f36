/** The order confirmation email consumer: order.confirmed → one email, claimed before, stamped after. */
import type { Transporter } from 'nodemailer';
import {
  type CatalogueEvent,
  type ConsumerDefinition,
  catalogueEventTypes,
  consumerSettings,
  defineConsumer,
  defineSettings,
  type LatePolicy,
  topicFor,
  zBool,
  zDurationMs,
  zEnum,
  zInt,
  zString,
} from '../runtime/index.js';
import { sendConfirmation } from './send-confirmation.js';

/** A confirmation email hours late is wrong: past its deadline it is dead-lettered for a person to decide. */
const WHEN_LATE: LatePolicy = 'dead-letter';

export const confirmationEmailSettings = defineSettings('confirmation-email', {
  ...consumerSettings({
    groupId: 'confirmation-email',
    metricsPort: '9472',
    deadlineMs: '1800000',
    whenLate: WHEN_LATE,
  }),
  smtpHost: {
    env: 'SMTP_HOST',
    default: '127.0.0.1',
    parser: zString({ minLength: 1, example: 'smtp.example.com' }),
    description: 'SMTP server host.',
  },
  smtpPort: {
    env: 'SMTP_PORT',
    default: '587',
    parser: zInt({ min: 1, max: 65_535, example: '587' }),
    description: 'SMTP server port.',
  },
  smtpSecure: {
    env: 'SMTP_SECURE',
    default: 'false',
    parser: zBool(),
    description:
      'TLS from the first byte (port 465); false uses STARTTLS (required or when offered: SMTP_REQUIRE_TLS).',
  },
  smtpRequireTls: {
    env: 'SMTP_REQUIRE_TLS',
    default: 'auto',
    parser: zEnum(['auto', 'yes', 'no'] as const),
    description:
      'Without SMTP_SECURE, whether STARTTLS is required (a server that does not offer it gets no password and no email): auto requires it whenever SMTP_PASSWORD is set; no sends in plain text when STARTTLS is not offered, and is refused together with SMTP_PASSWORD.',
  },
  smtpUser: {
    env: 'SMTP_USER',
    default: '',
    parser: zString(),
    description: 'SMTP user; empty for no authentication.',
  },
  smtpPassword: { env: 'SMTP_PASSWORD', default: '', parser: zString(), description: 'SMTP password.', secret: true },
  smtpTimeoutMs: {
    env: 'SMTP_TIMEOUT_MS',
    default: '15000',
    parser: zDurationMs({ min: 100, example: '15000' }),
    description:
      'Connection, greeting and socket timeout; a timeout is an infrastructure failure (retried, never dead-lettered as poison).',
  },
  mailFrom: {
    env: 'MAIL_FROM',
    default: 'Stagefront <tickets@stagefront.example>',
    parser: zString({ minLength: 3, example: 'Stagefront <tickets@stagefront.example>' }),
    description: 'From address of confirmation emails.',
  },
  sendConcurrency: {
    env: 'SMTP_CONCURRENCY',
    default: '4',
    parser: zInt({ min: 1, max: 64, example: '4' }),
    description:
      'Emails sent at the same time (each order is its own key; pooled SMTP connections, one per concurrent send).',
  },
  claimAbandonedAfterMs: {
    env: 'CLAIM_ABANDONED_AFTER_MS',
    default: '600000',
    parser: zDurationMs({ min: 1000, example: '600000' }),
    description:
      'A send claimed longer ago than this and never stamped counts as abandoned and is sent again (same Message-ID); keep it well above SMTP_TIMEOUT_MS.',
  },
});

/** The topics the consumer reads. */
export function confirmationEmailTopics(topicPrefix: string): string[] {
  return [topicFor(topicPrefix, 'order')];
}

export function confirmationEmailConsumer(
  name: string,
  topicPrefix: string,
  transport: Transporter,
  mailFrom: string,
  claimAbandonedAfterMs: number,
  concurrency = 1,
): ConsumerDefinition<CatalogueEvent<'orderConfirmed'>> {
  return defineConsumer({
    name,
    topics: confirmationEmailTopics(topicPrefix),
    eventTypes: catalogueEventTypes(['orderConfirmed'], WHEN_LATE),
    effects: {
      kind: 'external',
      claimAbandonedAfterMs,
      concurrency,
      perform: (event) => sendConfirmation(transport, mailFrom, event),
    },
  });
}
