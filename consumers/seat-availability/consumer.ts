/** The seat availability consumer: seat.* events into the per show and section read model. */
import {
  type ConsumerDefinition,
  catalogueEventTypes,
  consumerSettings,
  defineConsumer,
  defineSettings,
  type LatePolicy,
  topicFor,
} from '../runtime/index.js';
import { type SeatEvent, applySeatEvents } from './apply-seat-events.js';

/** Right however late: past the deadline the alert fires and the consumer keeps trying. */
const WHEN_LATE: LatePolicy = 'keep-retrying';

export const seatAvailabilitySettings = defineSettings(
  'seat-availability',
  consumerSettings({ groupId: 'seat-availability', metricsPort: '9471', deadlineMs: '60000', whenLate: WHEN_LATE }),
);

export function seatAvailabilityConsumer(name: string, topicPrefix: string): ConsumerDefinition<SeatEvent> {
  return defineConsumer({
    name,
    topics: [topicFor(topicPrefix, 'seat')],
    eventTypes: catalogueEventTypes(['seatHeld', 'seatReleased', 'seatHoldExpired', 'seatSold'], WHEN_LATE),
    effects: { kind: 'transactional', apply: applySeatEvents },
  });
}
