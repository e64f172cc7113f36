/**
 * A second Postgres cluster, only for the consumer database of the outage tests, so stopping it
 * never touches the shared stack. Started and stopped through the launcher's own component.
 */
import pg from 'pg';
import { postgresComponent } from '../../../stack/postgres.js';
import { stackLayout } from '../../../stack/config.js';
import { adminQuery, uniqueName } from '../../support/stack.js';

const PORT = '54349';

export interface OwnPostgres {
  adminUrl: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  createDatabase(prefix: string): Promise<{ url: string; drop: () => Promise<void> }>;
}

export function ownPostgres(): OwnPostgres {
  const component = postgresComponent(
    stackLayout({ ...process.env, STACK_HOME: '.stack/consumer-db-test', STACK_POSTGRES_PORT: PORT }),
  );
  const adminUrl = `postgres://postgres:postgres@127.0.0.1:${PORT}/postgres`;
  return {
    adminUrl,
    start: async () => {
      if (component.pid() === undefined) await component.launch();
    },
    stop: () => component.stop(),
    createDatabase: async (prefix) => {
      const name = uniqueName(prefix).toLowerCase();
      await adminQuery(adminUrl, `create database ${pg.escapeIdentifier(name)}`);
      return {
        url: adminUrl.replace(/\/postgres$/, `/${name}`),
        drop: async () => {
          await adminQuery(adminUrl, `drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
        },
      };
    },
  };
}
