/** What `npm run connector -- status` says about the slot of a connector Connect reports RUNNING. */
import { describe, expect, it } from 'vitest';
import { SLOT_RECOVERY_COMMAND, slotProblem } from '../../connectors/connector-health.js';

describe('slotProblem', () => {
  it('a streaming slot is no problem, whatever its wal_status short of lost', () => {
    expect(slotProblem('s', { exists: true, walStatus: 'reserved', active: true }, 15_000)).toBeUndefined();
    expect(slotProblem('s', { exists: true, walStatus: 'unreserved', active: true }, 15_000)).toBeUndefined();
  });

  it('a missing or lost slot is failing, with the recovery command', () => {
    expect(slotProblem('s', { exists: false }, 15_000)).toMatch(
      new RegExp(`^replication slot s does not exist: .*${SLOT_RECOVERY_COMMAND.replace(/[-]/g, '\\-')}$`),
    );
    expect(slotProblem('s', { exists: true, walStatus: 'lost', active: true }, 15_000)).toContain(
      `replication slot s is lost (wal_status lost`,
    );
    expect(slotProblem('s', { exists: true, walStatus: 'lost', active: false }, 15_000)).toContain(
      SLOT_RECOVERY_COMMAND,
    );
  });

  it('a slot without a reader past the grace is failing, naming the grace', () => {
    expect(slotProblem('s', { exists: true, walStatus: 'reserved', active: false }, 15_000)).toContain(
      'has had no reader for 15000 ms although the task is RUNNING',
    );
  });
});
