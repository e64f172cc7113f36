/** The benchmark's input: seat held / released / sold events over a set of seats, produced like the outbox router does. */
import { randomUUID } from 'node:crypto';
import { EVENTS, EVENT_CONTENT_TYPE, EVENT_SOURCE, type EventName, readEventSchema } from '../events/catalogue.js';
import type { Message, Producer } from '../lib/kafka.js';
import { type Registry, encodeWithSchema, registerAvroSchema } from '../lib/schema-registry.js';

function seatPayload(name: EventName, seat: number, step: number): Record<string, unknown> {
  const base = { seat_id: `seat-${seat}`, show_id: `show-${seat % 4}`, section: `S${seat % 10}`, hold_id: `hold-${seat}-${step >> 1}` };
  const now = Date.now();
  if (name === 'seatHeld') return { ...base, buyer_id: 'buyer', held_at: now, expires_at: now + 600_000 };
  if (name === 'seatReleased') return { ...base, released_at: now };
  return { seat_id: base.seat_id, show_id: base.show_id, section: base.section, order_id: `order-${seat}`, price_cents: 4500, sold_at: now };
}

async function message(registry: Registry, ids: Map<EventName, number>, index: number, seats: number, steps: number): Promise<Message> {
  const seat = index % seats;
  const step = Math.floor(index / seats);
  const name: EventName = step === steps - 1 ? 'seatSold' : step % 2 === 0 ? 'seatHeld' : 'seatReleased';
  const id = randomUUID();
  return {
    key: `seat-${seat}`,
    value: await encodeWithSchema(registry, ids.get(name) ?? 0, seatPayload(name, seat, step)),
    headers: { id, ce_id: id, ce_type: EVENTS[name].type, ce_source: EVENT_SOURCE, ce_specversion: '1.0', ce_time: new Date().toISOString(), ce_subject: `seat-${seat}`, 'content-type': EVENT_CONTENT_TYPE },
  };
}

/** Produces `count` seat events (each seat: held, released, held, …, sold) in sends of 500. */
export async function produceSeatEvents(producer: Producer, registry: Registry, topic: string, count: number, seats: number): Promise<void> {
  const ids = new Map<EventName, number>();
  for (const name of ['seatHeld', 'seatReleased', 'seatSold'] as const) ids.set(name, await registerAvroSchema(registry, EVENTS[name].subject, readEventSchema(name)));
  const steps = Math.ceil(count / seats);
  for (let from = 0; from < count; from += 500) {
    const indexes = Array.from({ length: Math.min(500, count - from) }, (_, i) => from + i);
    await producer.send({ topic, acks: -1, messages: await Promise.all(indexes.map((i) => message(registry, ids, i, seats, steps))) });
  }
}
