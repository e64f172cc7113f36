/**
 * Bounded WAL generation on the slot-test cluster: one small insert and a segment switch per
 * step (1 MB per step with 1 MB segments), and reading a slot's state as the admin sees it.
 */
import pg from 'pg';
import type { WalStatus } from '../../../monitors/slot-monitor/slot-readings.js';

export interface SlotState {
  walStatus: WalStatus | null;
  active: boolean;
  safeWalSize: number | null;
  retained: number | null;
}

export class WalTraffic {
  readonly #client: pg.Client;

  private constructor(client: pg.Client) {
    this.#client = client;
  }

  static async connect(url: string): Promise<WalTraffic> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(
      /* sql */ `create table if not exists wal_filler (id bigserial primary key, note text not null)`,
    );
    return new WalTraffic(client);
  }

  /** Writes one row outside the outbox and switches to a new WAL segment. */
  async step(): Promise<void> {
    await this.#client.query(/* sql */ `insert into wal_filler (note) values ('filler')`);
    await this.#client.query(/* sql */ `select pg_switch_wal()`);
  }

  async checkpoint(): Promise<void> {
    await this.#client.query(/* sql */ `checkpoint`);
  }

  async slotState(slotName: string): Promise<SlotState | undefined> {
    const { rows } = await this.#client.query(
      /* sql */ `select wal_status, active, safe_wal_size::text as safe, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::text as retained
                   from pg_replication_slots where slot_name = $1`,
      [slotName],
    );
    const row = rows[0] as
      { wal_status: WalStatus | null; active: boolean; safe: string | null; retained: string | null } | undefined;
    if (!row) return undefined;
    return {
      walStatus: row.wal_status,
      active: row.active,
      safeWalSize: row.safe === null ? null : Number(row.safe),
      retained: row.retained === null ? null : Number(row.retained),
    };
  }

  /**
   * Steps until the slot reaches `status` (at most `maxSteps`); returns when the test first saw it.
   * `beforeStep` may checkpoint to keep WAL-triggered checkpoints away.
   */
  async stepUntil(
    slotName: string,
    status: WalStatus,
    maxSteps: number,
    beforeStep?: (step: number, state: SlotState | undefined) => Promise<void>,
  ): Promise<number> {
    for (let step = 0; step < maxSteps; step += 1) {
      const state = await this.slotState(slotName);
      if (state?.walStatus === status) return Date.now();
      await beforeStep?.(step, state);
      await this.step();
    }
    const state = await this.slotState(slotName);
    if (state?.walStatus === status) return Date.now();
    throw new Error(
      `slot ${slotName} did not reach ${status} within ${maxSteps} WAL segments; it is ${JSON.stringify(state)}`,
    );
  }

  async close(): Promise<void> {
    await this.#client.end();
  }
}
