import { v7 } from 'uuid';

/**
 * A UUIDv7 (RFC 9562, the `uuid` package): 48 bits of Unix milliseconds, then a counter that keeps
 * ids from one process strictly increasing within a millisecond (it borrows the next millisecond
 * rather than repeat one), then random bits. Sorted by value, ids are in creation order: the
 * outbox's primary key index stays append-only, and Debezium's incremental snapshot (which reads
 * by primary key) re-emits events in the order they were written.
 */
export function uuidV7(): string {
  return v7();
}
