/**
 * The external rehearsal environment (docker compose): the stack, the setup, the consumers and
 * the monitors already run; the rehearsal starts nothing. It reaches the databases, Alertmanager
 * and the Mailpit mail catcher through the REHEARSAL_*_URL settings and calls the seat service
 * in-process like the native rehearsal (the seat service's own settings come from the environment).
 */
import { connectorSettings } from '../connectors/settings.js';
import { errorMessage } from '../lib/errors.js';
import { parseSettings } from '../lib/settings.js';
import { seatServiceSettings } from '../seat-service/settings.js';
import type { RehearsalEnvironment } from './environment.js';
import type { RehearsalConfig } from './settings.js';

interface MailpitPage {
  messages_count?: number;
  total?: number;
  messages?: { MessageID?: string }[];
}

/**
 * Message-IDs of every message Mailpit holds, read page by page from its /api/v1/messages list.
 * The confirmation email consumer sets the Message-ID to <ce_id@…>, as with the native SMTP sink.
 */
async function mailpitMessageIds(mailpitUrl: string, pageSize = 1000): Promise<string[]> {
  const base = mailpitUrl.replace(/\/$/, '');
  const ids: string[] = [];
  for (let start = 0; ; start += pageSize) {
    const url = `${base}/api/v1/messages?start=${start}&limit=${pageSize}`;
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) }).catch((err: unknown) => {
      throw new Error(`Mailpit at ${base} did not answer (${errorMessage(err)}); check REHEARSAL_MAILPIT_URL`);
    });
    if (!response.ok)
      throw new Error(
        `Mailpit at ${base} answered ${response.status} to /api/v1/messages; check REHEARSAL_MAILPIT_URL`,
      );
    const page = (await response.json()) as MailpitPage;
    const messages = page.messages ?? [];
    for (const message of messages) if (message.MessageID) ids.push(message.MessageID.replace(/^<|>$/g, ''));
    const total = page.messages_count ?? page.total ?? 0;
    if (messages.length === 0 || start + messages.length >= total) return ids;
  }
}

export function openExternalEnvironment(config: RehearsalConfig): RehearsalEnvironment {
  // The seat service's admin URL is only read by setup; the rehearsal's own one serves if it is not given.
  const seatConfig = parseSettings(seatServiceSettings, {
    SEAT_DB_ADMIN_URL: config.seatAdminUrl,
    ...process.env,
    HOLD_TTL_MS: String(config.holdTtlMs),
  });
  return {
    mode: 'external',
    seatConfig,
    seatAdminUrl: config.seatAdminUrl,
    consumerAdminUrl: config.consumerAdminUrl,
    alertmanagerUrl: config.alertmanagerUrl,
    slotName: parseSettings(connectorSettings, { ...process.env, CONNECTOR_SEAT_DB_URL: config.seatAdminUrl }).slotName,
    emailMessageIds: () => mailpitMessageIds(config.mailpitUrl),
    drillContext: () => undefined,
    // docker compose restarts nothing for the rehearsal (its services have no restart policy).
    unplannedRestarts: () => [],
    logFiles: () => [],
    close: () => Promise.resolve(),
  };
}
