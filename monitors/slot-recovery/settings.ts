/** Settings of `npm run slot-recovery`: the connector, the seat database, and the inboxes for --since auto. */
import { defineSettings, zDurationMs, zString, zUrl } from '../../lib/settings.js';
import { connectApiSettings } from '../../connectors/connect-client.js';
import { consumerInboxSettings } from '../reconciliation/settings.js';

export const slotRecoverySettings = defineSettings('slot-recovery', {
  ...connectApiSettings('the recovery'),
  connectorName: {
    env: 'CONNECTOR_NAME',
    default: 'seat-outbox',
    parser: zString({ minLength: 1, example: 'seat-outbox' }),
    description:
      'The outbox connector whose slot was lost; its slot and signal table are read from its live configuration.',
  },
  seatDbUrl: {
    env: 'SLOT_RECOVERY_SEAT_DB_URL',
    default: undefined,
    parser: zUrl({
      protocols: ['postgres', 'postgresql'],
      example: 'postgres://stagefront_debezium:secret@db:5432/stagefront',
    }),
    description:
      "The seat database as the connector's role: REPLICATION drops the slot, INSERT on debezium_signal sends the snapshot signal, SELECT on outbox reconciles.",
    secret: true,
  },
  ...consumerInboxSettings,
  safetyMarginMs: {
    env: 'SLOT_RECOVERY_SAFETY_MARGIN_MS',
    default: '300000',
    parser: zDurationMs({ min: 0, example: '300000' }),
    description:
      '--since auto starts this much before the oldest event some consumer is missing (covers long transactions and clock skew); re-emitting more only costs duplicates the inboxes drop.',
  },
  stepTimeoutMs: {
    env: 'SLOT_RECOVERY_STEP_TIMEOUT_MS',
    default: '120000',
    parser: zDurationMs({ min: 1000, example: '120000' }),
    description: 'How long one step may wait (the connector to stop or run, the slot to be released or created).',
  },
  verifyTimeoutMs: {
    env: 'SLOT_RECOVERY_VERIFY_TIMEOUT_MS',
    default: '600000',
    parser: zDurationMs({ min: 0, example: '600000' }),
    description:
      'After the re-emit, how long to wait for reconciliation to show no gaps since the start time; 0 skips the check.',
  },
});
