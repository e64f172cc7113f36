/** Where the consumer database's numbered migrations live (inbox, read models, redrives). */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CONSUMER_MIGRATIONS = join(dirname(fileURLToPath(import.meta.url)), '..', 'migrations');
