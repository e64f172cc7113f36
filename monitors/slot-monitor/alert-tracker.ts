/**
 * The shared alert tracker (monitors/alerting/alert-tracker.ts) bound to the slot monitor's
 * catalog, so the slot monitor's code names its alerts with the AlertName type.
 */
import {
  AlertTracker as CatalogAlertTracker,
  type AlertTrackerOptions,
  type AlertCandidate as CatalogAlertCandidate,
} from '../alerting/alert-tracker.js';
import { ALERTS, type AlertName } from './alert-catalog.js';

export type AlertCandidate = CatalogAlertCandidate<AlertName>;

export class AlertTracker extends CatalogAlertTracker<AlertName> {
  constructor(options: AlertTrackerOptions) {
    super(ALERTS, options);
  }
}
