/** `npm run docs:consumer-settings`: the settings tables of every consumer program, as Markdown for docs/consumers.md. */
import { settingsMarkdownTable } from '../lib/settings.js';
import { confirmationEmailSettings } from './confirmation-email/consumer.js';
import { redriveSettings } from './redrive/settings.js';
import { salesLedgerSettings } from './sales-ledger/consumer.js';
import { recomputeSettings } from './sales-ledger/recompute-settings.js';
import { seatAvailabilitySettings } from './seat-availability/consumer.js';

const tables: [string, string][] = [
  ['seat-availability (`npm run consumer:seat-availability`)', settingsMarkdownTable(seatAvailabilitySettings)],
  ['confirmation-email (`npm run consumer:confirmation-email`)', settingsMarkdownTable(confirmationEmailSettings)],
  ['sales-ledger (`npm run consumer:sales-ledger`)', settingsMarkdownTable(salesLedgerSettings)],
  ['sales-ledger recompute (`npm run sales-ledger:recompute`)', settingsMarkdownTable(recomputeSettings)],
  ['redrive (`npm run redrive`)', settingsMarkdownTable(redriveSettings)],
];

for (const [title, table] of tables) process.stdout.write(`#### ${title}\n\n${table}\n`);
