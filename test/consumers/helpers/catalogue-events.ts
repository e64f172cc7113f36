/** Catalogue events (seat.*, order.confirmed) as the outbox router would publish them, for consumer tests. */
import { EVENTS, type EventName, type EventPayloads, readEventSchema } from '../../../events/catalogue.js';
import type { Registry } from '../../../lib/schema-registry.js';
import { type CloudEventRecord, registerTestSchema } from '../../support/cloudevent-records.js';

export type SchemaIds = Record<EventName, number>;

/** Registers the catalogue's schemas under their subjects (the same ids the producer gets). */
export async function catalogueSchemaIds(registry: Registry): Promise<SchemaIds> {
  const ids: Partial<SchemaIds> = {};
  for (const name of Object.keys(EVENTS) as EventName[])
    ids[name] = await registerTestSchema(registry, EVENTS[name].subject, readEventSchema(name));
  return ids as SchemaIds;
}

export function catalogueEvent<N extends EventName>(
  ids: SchemaIds,
  name: N,
  payload: EventPayloads[N],
  id?: string,
): CloudEventRecord {
  const key = String((payload as unknown as Record<string, unknown>)[EVENTS[name].keyField]);
  return { type: EVENTS[name].type, key, schemaId: ids[name], payload, ...(id ? { id } : {}) };
}
