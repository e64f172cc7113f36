/** `npm run docs:recovery-settings`: the settings tables of reconcile and slot-recovery, as Markdown for docs/slot-recovery.md. */
import { settingsMarkdownTable } from '../../lib/settings.js';
import { reconcileSettings } from '../reconciliation/settings.js';
import { slotRecoverySettings } from './settings.js';

process.stdout.write(`#### reconcile (\`npm run reconcile\`)\n\n${settingsMarkdownTable(reconcileSettings)}\n`);
process.stdout.write(`#### slot-recovery (\`npm run slot-recovery\`)\n\n${settingsMarkdownTable(slotRecoverySettings)}\n`);
