/** The sales ledger consumer: order.confirmed into totals per show. */
import {
  type CatalogueEvent,
  type ConsumerDefinition,
  catalogueEventTypes,
  consumerSettings,
  defineConsumer,
  defineSettings,
  type LatePolicy,
  topicFor,
} from '../runtime/index.js';
import { applyConfirmedOrders } from './apply-orders.js';

/** Right however late: past the deadline the alert fires and the consumer keeps trying. */
const WHEN_LATE: LatePolicy = 'keep-retrying';

export const salesLedgerSettings = defineSettings(
  'sales-ledger',
  consumerSettings({ groupId: 'sales-ledger', metricsPort: '9473', deadlineMs: '900000', whenLate: WHEN_LATE }),
);

export function salesLedgerConsumer(
  name: string,
  topicPrefix: string,
): ConsumerDefinition<CatalogueEvent<'orderConfirmed'>> {
  return defineConsumer({
    name,
    topics: [topicFor(topicPrefix, 'order')],
    eventTypes: catalogueEventTypes(['orderConfirmed'], WHEN_LATE),
    effects: { kind: 'transactional', apply: applyConfirmedOrders },
  });
}
