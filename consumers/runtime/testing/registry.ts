/**
 * The schema registry as the test kit runs it: in this process, fed the project's `.avsc` files.
 * The runtime reaches the registry through one port (`Registry`: the registry client, which
 * caches every schema it has fetched by id); the kit fills that cache itself and never opens a
 * connection. Encoding and decoding are the real client's and the runtime's own code, in the
 * real wire format (magic byte 0, the 4-byte schema id, the Avro body): what a test of a
 * consumer is about (its effects, the inbox, the failure rules) runs unchanged, and what is
 * left out is the registry server, which the real-stack tests cover (test/consumers/).
 */
import { randomUUID } from 'node:crypto';
import { SchemaType } from '@kafkajs/confluent-schema-registry';
import avro from 'avsc';
import { EVENTS, type EventName, readEventSchema } from '../../../events/catalogue.js';
import { type Registry, createSchemaRegistry, encodeWithSchema } from '../../../lib/schema-registry.js';

export interface InProcessRegistry extends Registry {
  /** The id of an Avro schema (its text), registered on first use; ids count from 1 in registration order. */
  idOf(schema: string): number;
  /** The id of a catalogue event's schema (events/schemas/). */
  catalogueId(name: EventName): number;
  /** The registry wire format of `payload` written with the schema of `schemaId`. */
  encode(schemaId: number, payload: unknown): Promise<Buffer>;
}

/**
 * A registry that lives in this process. Its URL leads nowhere (a loopback port nothing listens
 * on, with a path of its own so the runtime's per-registry caches never mix two kits): a schema
 * id it was not given is a registry that does not answer, which the runtime holds the partition
 * for (an infrastructure failure), as it would for a real registry that is away.
 */
export function inProcessRegistry(): InProcessRegistry {
  const url = `http://127.0.0.1:9/in-process/${randomUUID()}`;
  const { client, requestTimeoutMs } = createSchemaRegistry(url);
  const ids = new Map<string, number>();
  const registry: InProcessRegistry = {
    url,
    client,
    requestTimeoutMs,
    idOf(schema) {
      const canonical = JSON.stringify(JSON.parse(schema));
      let id = ids.get(canonical);
      if (id === undefined) {
        id = ids.size + 1;
        ids.set(canonical, id);
        client.cache.setSchema(id, SchemaType.AVRO, avro.Type.forSchema(JSON.parse(schema) as avro.Schema));
      }
      return id;
    },
    catalogueId: (name) => registry.idOf(readEventSchema(name)),
    encode: (schemaId, payload) => encodeWithSchema(registry, schemaId, payload),
  };
  return registry;
}

/** The catalogue name of a ce_type or catalogue name (`com.stagefront.seat.held` or `seatHeld`), if it is one. */
export function catalogueName(type: string): EventName | undefined {
  return (Object.keys(EVENTS) as EventName[]).find((name) => name === type || EVENTS[name].type === type);
}
