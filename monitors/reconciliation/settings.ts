/** Settings of `npm run reconcile`; the consumer part is shared with the lost-slot recovery. */
import { z } from 'zod';
import { defineSettings, zDurationMs, zInt, zUrl, type SettingParser } from '../../lib/settings.js';
import { zConsumers } from './consumer-kinds.js';

const pgUrl = (example: string) => zUrl({ protocols: ['postgres', 'postgresql'], example });

function optionalPgUrl(example: string): SettingParser<string> {
  const url = pgUrl(example);
  return { schema: z.union([z.literal(''), url.schema]), expected: `${url.expected}, or empty`, example };
}

/** What reconciliation needs besides the seat database: the inboxes and the window. */
export const consumerInboxSettings = {
  consumerDbUrl: {
    env: 'RECONCILE_CONSUMER_DB_URL',
    default: undefined,
    parser: pgUrl('postgres://consumers:secret@127.0.0.1:54329/stagefront_consumers'),
    description: 'The consumer database holding the inboxes (SELECT on inbox is enough).',
    secret: true,
  },
  consumers: {
    env: 'RECONCILE_CONSUMERS',
    default: 'seat-availability,sales-ledger,confirmation-email',
    parser: zConsumers(),
    description:
      'Consumers to check; the name after = is the inbox consumer name (the group id) when it differs from the kind.',
  },
  windowMs: {
    env: 'RECONCILE_WINDOW_MS',
    default: '604800000',
    parser: zDurationMs({ min: 1000, example: '604800000' }),
    description:
      'How far back to look, in ms; the outbox must keep rows longer than this plus SLOT_RECOVERY_SAFETY_MARGIN_MS (the seat service refuses an OUTBOX_RETENTION_MS that does not; 14 days by default).',
  },
  pageSize: {
    env: 'RECONCILE_PAGE_SIZE',
    default: '5000',
    parser: zInt({ min: 10, max: 100_000, example: '5000' }),
    description: 'Outbox rows read (and looked up in each inbox) per query.',
  },
  graceMs: {
    env: 'RECONCILE_GRACE_MS',
    default: '60000',
    parser: zDurationMs({ min: 0, example: '60000' }),
    description:
      'Outbox rows younger than this are left out: they may still be on their way to the consumers. In npm run reconcile, an email claimed longer ago than this and never stamped sent also counts as unsent (exit 3).',
  },
} as const;

export const reconcileSettings = defineSettings('reconcile', {
  seatDbUrl: {
    env: 'RECONCILE_SEAT_DB_URL',
    default: undefined,
    parser: pgUrl('postgres://reader:secret@replica:5432/stagefront'),
    description: 'The seat database, read-only (SELECT on outbox); point it at a replica when there is one.',
    secret: true,
  },
  ...consumerInboxSettings,
  coverageDbUrl: {
    env: 'RECONCILE_COVERAGE_DB_URL',
    default: '',
    parser: optionalPgUrl('postgres://stagefront_debezium:secret@db:5432/stagefront'),
    description:
      "The seat database's primary, as a role with INSERT on outbox_reconciled (stagefront_debezium): a clean run that checked every consumer records its window there, and the outbox purge deletes only rows such a run covered. Empty: RECONCILE_SEAT_DB_URL (when that is a replica the record fails with a warning, and the purge waits).",
    secret: true,
  },
  missingShown: {
    env: 'RECONCILE_MISSING_SHOWN',
    default: '20',
    parser: zInt({ min: 0, max: 10_000, example: '20' }),
    description: 'Missing event ids listed per consumer (all of them are counted).',
  },
});
