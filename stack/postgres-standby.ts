/**
 * The seat database's streaming standby (STACK_POSTGRES_STANDBY=yes): a copy of the primary made
 * with the backup API (pg_backup_start, a file copy, pg_backup_stop's backup_label), so no
 * pg_basebackup is needed, streaming through a physical slot, with the primary's failover slots
 * synchronized to it (sync_replication_slots). After a promotion it is the primary.
 */
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import type { Component } from './component.js';
import type { StackLayout } from './config.js';
import { clusterComponent, postgresHome, STANDBY_SLOT } from './postgres.js';
import { chownToServerUser } from './postgres-server.js';

/** Folder of the standby cluster: next to the primary's. */
export function standbyHome(layout: StackLayout): string {
  return join(dirname(postgresHome(layout)), 'postgres-standby');
}

export function adminUrl(port: number, database = 'postgres'): string {
  return `postgres://postgres:postgres@127.0.0.1:${port}/${database}`;
}

export function postgresStandbyComponent(layout: StackLayout): Component {
  const s = layout.settings;
  return clusterComponent(layout, {
    name: 'postgres-standby',
    port: s.postgresStandbyPort,
    home: standbyHome(layout),
    dependsOn: ['postgres'],
    prepare: async (dataDir) => {
      if (!existsSync(join(dataDir, 'PG_VERSION'))) await copyPrimary(layout, dataDir);
    },
    settings: [
      // dbname: the slot sync worker connects to a database to read the primary's slots.
      `primary_conninfo = 'host=127.0.0.1 port=${s.postgresPort} user=postgres password=postgres dbname=postgres application_name=${STANDBY_SLOT}'`,
      `primary_slot_name = '${STANDBY_SLOT}'`,
      'hot_standby = on',
      // The primary keeps the catalog rows the synchronized logical slots need.
      'hot_standby_feedback = on',
      'sync_replication_slots = on',
    ],
  });
}

/** Folders whose contents a base backup leaves out (the server remakes them); the folders themselves stay. */
const EMPTIED = new Set([
  'pg_wal',
  'pg_replslot',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_stat_tmp',
  'pg_subtrans',
]);
const LEFT_OUT = new Set([
  'postmaster.pid',
  'postmaster.opts',
  'backup_label',
  'tablespace_map',
  'standby.signal',
  'recovery.signal',
  'stagefront.conf',
]);

/**
 * A base backup by hand: the physical slot first (the primary keeps every WAL segment from here
 * on), pg_backup_start, a copy of the data folder, pg_backup_stop's label as backup_label, and
 * standby.signal. The standby fetches the WAL of the copy through the slot when it starts.
 */
async function copyPrimary(layout: StackLayout, dataDir: string): Promise<void> {
  const primaryData = join(postgresHome(layout), 'data');
  const client = new pg.Client({ connectionString: adminUrl(layout.settings.postgresPort) });
  await client.connect();
  try {
    await client.query(
      /* sql */ `select pg_create_physical_replication_slot($1, true) where not exists (select 1 from pg_replication_slots where slot_name = $1)`,
      [STANDBY_SLOT],
    );
    // Copied beside the final folder and renamed at the end: a copy cut short is never taken for a standby.
    const partial = `${dataDir}.partial`;
    rmSync(partial, { recursive: true, force: true });
    await client.query(/* sql */ `select pg_backup_start('stagefront standby', true)`);
    copyTree(primaryData, partial, '');
    const { rows } = await client.query(/* sql */ `select labelfile, spcmapfile from pg_backup_stop(true)`);
    const { labelfile, spcmapfile } = rows[0] as { labelfile: string; spcmapfile: string | null };
    writeFileSync(join(partial, 'backup_label'), labelfile);
    if (spcmapfile) writeFileSync(join(partial, 'tablespace_map'), spcmapfile);
    writeFileSync(join(partial, 'standby.signal'), '');
    chownToServerUser(dirname(dataDir));
    chownToServerUser(partial, { recursive: true });
    rmSync(dataDir, { recursive: true, force: true });
    renameSync(partial, dataDir);
  } finally {
    await client.end();
  }
}

/** Copies a live data folder; files that vanish while copying (temporary ones) are skipped, as pg_basebackup does. */
function copyTree(from: string, to: string, relative: string): void {
  mkdirSync(to, { recursive: true, mode: 0o700 });
  for (const name of readdirSync(from)) {
    const path = relative === '' ? name : `${relative}/${name}`;
    if (LEFT_OUT.has(path) || name.startsWith('pgsql_tmp')) continue;
    const source = join(from, name);
    const target = join(to, name);
    try {
      const stat = lstatSync(source);
      if (stat.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
      else if (stat.isDirectory()) {
        if (EMPTIED.has(path)) mkdirSync(target, { mode: 0o700 });
        else copyTree(source, target, path);
      } else copyFileSync(source, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  if (relative === '') mkdirSync(join(to, 'pg_wal', 'archive_status'), { recursive: true, mode: 0o700 });
}
