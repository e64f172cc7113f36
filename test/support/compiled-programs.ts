/**
 * Vitest's global setup: npm run build before any test, so that a test starting a compiled
 * program (the rehearsal's, an npm script's) runs the sources as they are, not an older dist/.
 */
import { buildPrograms } from '../../lib/source-tree.js';

export default function setup(): void {
  buildPrograms();
}
