/** What `reset` says before it does anything, and when it refuses (consumers/runtime/reset.ts). */
import { describe, expect, it } from 'vitest';
import { describeReset, type ResetPlan } from '../../../consumers/runtime/reset.js';

const plan: ResetPlan = {
  consumer: 'seat-heatmap',
  groupId: 'seat-heatmap',
  groupState: 'Empty',
  members: [],
  topics: [{ topic: 'stagefront.seat', ahead: 4, partitions: 6, earliest: [] }],
  schema: 'seat_heatmap',
  schemaExists: true,
  inboxRows: 120,
  hasInbox: true,
};

describe('the reset plan', () => {
  it('names the group, each topic, the schema and the inbox rows, and no refusal when the group is empty', () => {
    expect(describeReset(plan)).toEqual([
      'consumer seat-heatmap, group seat-heatmap (Empty)',
      '  stagefront.seat: 4 of 6 partitions have committed offsets past the earliest record; all go back to the earliest',
      '  schema seat_heatmap (its read model and migration record): dropped, made again at the next start',
      '  inbox: 120 rows of seat-heatmap deleted, with its delivery attempts',
    ]);
  });

  it('refuses while an instance is in the group, naming it and the fix; a dry run says it would', () => {
    const running = { ...plan, groupState: 'Stable', members: ['seat-heatmap on /10.0.0.7'] };
    expect(describeReset(running).at(-1)).toBe(
      'refused: 1 instance(s) of the consumer are in group seat-heatmap (seat-heatmap on /10.0.0.7); stop every instance, then run reset again',
    );
    expect(describeReset(running, true).at(-1)).toBe(
      'would be refused: 1 instance(s) of the consumer are in group seat-heatmap (seat-heatmap on /10.0.0.7); stop every instance, then run reset --yes',
    );
  });

  it('says when there is no schema to drop', () => {
    expect(describeReset({ ...plan, schemaExists: false })).toContain(
      '  schema seat_heatmap: not there (nothing to drop)',
    );
  });
});
