/** The order confirmation email consumer: order.confirmed → one email, claimed before, stamped after. */
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
import { type EmailSender, sendConfirmation } from './send-confirmation.js';

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
    default: '400',
    parser: zInt({ min: 1, max: 1000, example: '400' }),
    description:
      "Emails in flight at once in this process, over all its partitions, and the pooled SMTP connections they use (kept open). Throughput is at most this divided by the provider's time to accept one, and about half of that with the claims and stamps between groups: at 100 ms, 400 in flight keep up with 1,000 emails/s (200 only just). Per instance: keep it times the instances at or below the provider's connection limit.",
  },
  smtpRateLimit: {
    env: 'SMTP_RATE_LIMIT',
    default: '0',
    parser: zInt({ min: 0, max: 100_000, example: '250' }),
    description:
      "Emails per second at most, per instance (the provider's agreed rate divided by the instances); 0 for none. Either way a throttling answer (421, 451) halves the pace, which rises again by half every 500 ms without one.",
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

/**
 * Orders are sent `sender.concurrency` at a time within a group, and a group holds as many: every
 * send of the process still goes through the sender's one gate, so groups of several partitions
 * share its in-flight limit and pace.
 */
export function confirmationEmailConsumer(
  name: string,
  topicPrefix: string,
  sender: EmailSender,
  claimAbandonedAfterMs: number,
): ConsumerDefinition<CatalogueEvent<'orderConfirmed'>> {
  return defineConsumer({
    name,
    topics: confirmationEmailTopics(topicPrefix),
    eventTypes: catalogueEventTypes(['orderConfirmed'], WHEN_LATE),
    effects: {
      kind: 'external',
      claimAbandonedAfterMs,
      concurrency: sender.concurrency,
      maxGroupSize: Math.max(32, sender.concurrency),
      perform: (event) => sendConfirmation(sender, event),
    },
  });
}
