import { randomBytes } from 'node:crypto';

let lastMs = -1;
let sequence = 0;

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then a 12-bit sequence that keeps ids from one
 * process strictly increasing within a millisecond, then random bits. Sorted by value, ids are in
 * creation order: the outbox's primary key index stays append-only, and Debezium's incremental
 * snapshot (which reads by primary key) re-emits events in the order they were written.
 */
export function uuidV7(nowMs: number = Date.now()): string {
  if (nowMs > lastMs) {
    lastMs = nowMs;
    sequence = 0;
  } else {
    sequence += 1;
    if (sequence > 0xfff) {
      lastMs += 1; // borrow the next millisecond rather than repeat an id
      sequence = 0;
    }
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | ((sequence >> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
