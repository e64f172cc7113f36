/**
 * The settings tables in docs/configuration.md come from the programs' settings tables, so they
 * cannot drift: `npm run docs:settings` rewrites every `<!-- settings:NAME -->` …
 * `<!-- /settings:NAME -->` block there, and a unit test fails when the file differs from what this
 * would write. It rewrites the error-codes block of docs/operations.md from lib/errors.ts the same way.
 * (The file keeps its old name: other code imports PROGRAM_SETTINGS from it.)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { providerSettings } from '../bench/provider/settings.js';
import { benchSettings } from '../bench/settings.js';
import { connectorSettings } from '../connectors/settings.js';
import { confirmationEmailSettings } from '../consumers/confirmation-email/consumer.js';
import { redriveSettings } from '../consumers/redrive/settings.js';
import { salesLedgerSettings } from '../consumers/sales-ledger/consumer.js';
import { recomputeSettings } from '../consumers/sales-ledger/recompute-settings.js';
import { seatAvailabilitySettings } from '../consumers/seat-availability/consumer.js';
import { errorCodesMarkdown } from '../lib/errors.js';
import { settingsMarkdownTable, type SettingsDefinition, type SettingsTable } from '../lib/settings.js';
import { jobWatchdogSettings } from '../monitors/job-watchdog/settings.js';
import { reconcileSettings } from '../monitors/reconciliation/settings.js';
import { slotMonitorSettings } from '../monitors/slot-monitor/settings.js';
import { slotRecoverySettings } from '../monitors/slot-recovery/settings.js';
import { rehearsalSettings } from '../rehearsal/settings.js';
import { seatServiceSettings } from '../seat-service/settings.js';
import { holdSweeperSettings } from '../seat-service/sweeper-settings.js';
import { projectRoot, stackSettings } from '../stack/config.js';

export const PROGRAM_SETTINGS: Record<string, SettingsDefinition<SettingsTable>> = {
  stack: stackSettings,
  'seat-service': seatServiceSettings,
  connector: connectorSettings,
  rehearsal: rehearsalSettings,
  'seat-availability': seatAvailabilitySettings,
  'confirmation-email': confirmationEmailSettings,
  'sales-ledger': salesLedgerSettings,
  'sales-ledger-recompute': recomputeSettings,
  redrive: redriveSettings,
  'slot-monitor': slotMonitorSettings,
  reconcile: reconcileSettings,
  'slot-recovery': slotRecoverySettings,
  'hold-sweeper': holdSweeperSettings,
  'job-watchdog': jobWatchdogSettings,
  bench: benchSettings,
  'smtp-provider': providerSettings,
};

/** The Markdown file that holds every program's settings table. */
export const CONFIGURATION_DOC = join(projectRoot, 'docs', 'configuration.md');

/** The document with every settings block rewritten from the tables; unknown names are an error. */
export function renderSettingsBlocks(markdown: string): string {
  return markdown.replace(
    /<!-- settings:([a-z-]+) -->\n(?:[\s\S]*?<!-- \/settings:\1 -->\n)?/g,
    (_block, name: string) => {
      const def = PROGRAM_SETTINGS[name];
      if (!def)
        throw new Error(
          `${relative(projectRoot, CONFIGURATION_DOC)} names settings:${name}, which scripts/readme-settings.ts does not know`,
        );
      return `<!-- settings:${name} -->\n${settingsMarkdownTable(def).trimEnd()}\n<!-- /settings:${name} -->\n`;
    },
  );
}

/** The Markdown file whose error-codes block lists ERROR_CODES (lib/errors.ts). */
export const OPERATIONS_DOC = join(projectRoot, 'docs', 'operations.md');

/** The document with its `<!-- error-codes -->` block rewritten from the error table. */
export function renderErrorCodesBlock(markdown: string): string {
  const block = /<!-- error-codes -->\n(?:[\s\S]*?<!-- \/error-codes -->\n)?/;
  if (!block.test(markdown))
    throw new Error(`${relative(projectRoot, OPERATIONS_DOC)} has no <!-- error-codes --> block`);
  return markdown.replace(block, () => `<!-- error-codes -->\n${errorCodesMarkdown()}\n<!-- /error-codes -->\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeFileSync(CONFIGURATION_DOC, renderSettingsBlocks(readFileSync(CONFIGURATION_DOC, 'utf8')));
  console.log(`${relative(projectRoot, CONFIGURATION_DOC)}: settings tables rewritten`);
  writeFileSync(OPERATIONS_DOC, renderErrorCodesBlock(readFileSync(OPERATIONS_DOC, 'utf8')));
  console.log(`${relative(projectRoot, OPERATIONS_DOC)}: error codes rewritten`);
}
