/** Which instance a drill kills: the one doing the work, read from what the cluster says. */
import { describe, expect, it } from 'vitest';
import { consumerClientId } from '../../../consumers/runtime/client-id.js';
import {
  assignedPartitions,
  busiestPartition,
  connectWorkerComponent,
  kafkaNodeComponent,
  ownerOf,
  type GroupMemberAssignment,
} from '../../../rehearsal/drill-victims.js';

const end = (topic: string, partition: number, offset: number) => ({ topic, partition, offset });

describe('the busiest partition', () => {
  it('is the one that grew most between the two readings, not the one holding most', () => {
    const before = [end('s.seat', 0, 1000), end('s.seat', 1, 10), end('s.order', 0, 500)];
    const after = [end('s.seat', 0, 1005), end('s.seat', 1, 60), end('s.order', 0, 520)];
    expect(busiestPartition(before, after)).toEqual(end('s.seat', 1, 60));
  });

  it('breaks a tie by what the partition holds, and counts a partition new since the first reading from 0', () => {
    expect(busiestPartition([end('t', 0, 100), end('t', 1, 0)], [end('t', 0, 110), end('t', 1, 10)])).toEqual(
      end('t', 0, 110),
    );
    expect(busiestPartition([end('t', 0, 100)], [end('t', 0, 101), end('t', 1, 7)])).toEqual(end('t', 1, 7));
  });

  it('is undefined when there is no partition', () => {
    expect(busiestPartition([], [])).toBeUndefined();
  });
});

describe("the stack's names for what the cluster reports", () => {
  it('names Kafka node n as the launcher does', () => {
    expect(kafkaNodeComponent(1)).toBe('kafka');
    expect(kafkaNodeComponent(3)).toBe('kafka-3');
  });

  it("names the Connect worker from a status's worker_id (its advertised host:port)", () => {
    expect(connectWorkerComponent('127.0.0.1:18083', 18083, 2)).toBe('connect');
    expect(connectWorkerComponent('127.0.0.1:18084', 18083, 2)).toBe('connect-2');
    expect(connectWorkerComponent('127.0.0.1:18085', 18083, 2)).toBeUndefined();
    expect(connectWorkerComponent('127.0.0.1:18082', 18083, 2)).toBeUndefined();
    expect(connectWorkerComponent('garbage', 18083, 2)).toBeUndefined();
  });
});

describe("a consumer group's owners", () => {
  const members: GroupMemberAssignment[] = [
    { clientId: consumerClientId('seat-availability', 101), assignment: { 's.seat': [0, 2] } },
    { clientId: consumerClientId('seat-availability', 202), assignment: { 's.seat': [1], 's.order': [0] } },
  ];

  it('finds the member that owns a partition, and nobody during a rebalance', () => {
    expect(ownerOf(members, 's.seat', 1)?.clientId).toBe('seat-availability-202');
    expect(ownerOf(members, 's.order', 0)?.clientId).toBe('seat-availability-202');
    expect(ownerOf(members, 's.seat', 3)).toBeUndefined();
    expect(ownerOf([], 's.seat', 0)).toBeUndefined();
  });

  it('lists every partition assigned, by topic', () => {
    expect(assignedPartitions(members)).toEqual([
      { topic: 's.seat', partition: 0 },
      { topic: 's.seat', partition: 2 },
      { topic: 's.seat', partition: 1 },
      { topic: 's.order', partition: 0 },
    ]);
  });

  it("tells each process's member apart by the runtime's client id", () => {
    expect(consumerClientId('sales-ledger', 4242)).toBe('sales-ledger-4242');
    expect(consumerClientId('sales-ledger')).toBe(`sales-ledger-${process.pid}`);
  });
});
