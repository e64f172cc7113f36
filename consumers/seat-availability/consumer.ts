/** The seat availability consumer: seat.* events into the per show and section read model. */
import { topicFor } from '../../events/catalogue.js';
import { defineSettings } from '../../lib/settings.js';
import { catalogueEventTypes } from '../payloads.js';
import { consumerSettings } from '../runtime/settings.js';
import type { ConsumerDefinition } from '../runtime/types.js';
import { applySeatEvents } from './apply-seat-events.js';

export const seatAvailabilitySettings = defineSettings('seat-availability', consumerSettings({ groupId: 'seat-availability', metricsPort: '9471' }));

export function seatAvailabilityConsumer(name: string, topicPrefix: string): ConsumerDefinition {
  return {
    name,
    topics: [topicFor(topicPrefix, 'seat')],
    eventTypes: catalogueEventTypes(['seatHeld', 'seatReleased', 'seatHoldExpired', 'seatSold']),
    effects: { kind: 'transactional', apply: applySeatEvents },
  };
}
