import { describe, expect, it } from 'vitest';
import { unplannedRestartsCheck } from '../../../rehearsal/run-record.js';

describe('unplannedRestartsCheck', () => {
  it('passes when the supervisor started nothing of its own accord', () => {
    expect(unplannedRestartsCheck([])).toMatchObject({ name: 'nothing died outside the drills', ok: true });
  });

  it('fails on a part that died on its own, naming it, when, and whether it came back', () => {
    const at = Date.parse('2026-12-07T10:00:05Z');
    const check = unplannedRestartsCheck([
      { name: 'sales-ledger', cause: 'died', seenDeadAt: at, delayMs: 0, servingAt: at + 1400 },
      { name: 'connect', cause: 'died', seenDeadAt: at + 1000, delayMs: 1000, error: 'port in use' },
    ]);
    expect(check.ok).toBe(false);
    expect(check.detail).toBe(
      'the supervisor started again: sales-ledger died at 10:00:05, back +1.4 s; connect died at 10:00:06, not back: port in use (their logs say why)',
    );
  });
});
