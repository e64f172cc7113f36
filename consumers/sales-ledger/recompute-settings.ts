/** Settings of the sales ledger recompute command. */
import { defineSettings, zUrl } from '../../lib/settings.js';

const postgresUrl = (example: string) => zUrl({ protocols: ['postgres', 'postgresql'], example });
export const recomputeSettings = defineSettings('sales-ledger-recompute', {
  consumerDatabaseUrl: {
    env: 'CONSUMER_DATABASE_URL',
    default: undefined,
    parser: postgresUrl('postgres://consumers:secret@127.0.0.1:54329/stagefront_consumers'),
    description: 'The consumer database holding the ledger.',
    secret: true,
  },
  seatDatabaseUrl: {
    env: 'SEAT_DATABASE_URL',
    default: undefined,
    parser: postgresUrl('postgres://reader:secret@127.0.0.1:54329/stagefront'),
    description: 'The seat database (a replica if there is one); read only.',
    secret: true,
  },
});
