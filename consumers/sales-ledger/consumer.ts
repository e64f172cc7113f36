/** The sales ledger consumer: order.confirmed into totals per show. */
import { topicFor } from '../../events/catalogue.js';
import { defineSettings } from '../../lib/settings.js';
import { catalogueEventTypes } from '../payloads.js';
import { consumerSettings } from '../runtime/settings.js';
import type { ConsumerDefinition } from '../runtime/types.js';
import { applyConfirmedOrders } from './apply-orders.js';

export const salesLedgerSettings = defineSettings('sales-ledger', consumerSettings({ groupId: 'sales-ledger', metricsPort: '9473' }));

export function salesLedgerConsumer(name: string, topicPrefix: string): ConsumerDefinition {
  return {
    name,
    topics: [topicFor(topicPrefix, 'order')],
    eventTypes: catalogueEventTypes(['orderConfirmed']),
    effects: { kind: 'transactional', apply: applyConfirmedOrders },
  };
}
