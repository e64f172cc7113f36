/**
 * The schema releases (events/schemas/released/): every version of each event's schema that
 * shipped. The schema file is the newest release, so a change to it cannot ship without a release
 * file; and every release reads what each older one wrote (BACKWARD_TRANSITIVE, the rule the seat
 * service registers under), checked here by Avro's own schema resolution, without a registry.
 */
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import {
  EVENTS,
  type EventName,
  RELEASED_SCHEMAS_DIR,
  readEventSchema,
  releasedEventSchemas,
} from '../../../events/catalogue.js';

const names = Object.keys(EVENTS).filter((name): name is EventName => Object.hasOwn(EVENTS, name));
const typeOf = (schema: string) => avro.Type.forSchema(JSON.parse(schema) as avro.Schema);

describe(`the released schemas in ${RELEASED_SCHEMAS_DIR}`, () => {
  it.each(names)('%s: versions 1…n without a gap, the newest one the schema file as it is', (name) => {
    const releases = releasedEventSchemas(name);
    expect(releases.map((r) => r.version)).toEqual(releases.map((_, index) => index + 1));
    const newest = releases.at(-1);
    expect(
      newest && JSON.parse(newest.schema),
      `${EVENTS[name].schemaFile} changed: add it as ${RELEASED_SCHEMAS_DIR}/${EVENTS[name].schemaFile.replace('.avsc', '')}.v${releases.length + 1}.avsc`,
    ).toEqual(JSON.parse(readEventSchema(name)));
  });

  it.each(names)('%s: each release reads what every older release wrote', (name) => {
    const releases = releasedEventSchemas(name);
    for (const [index, newer] of releases.entries())
      for (const older of releases.slice(0, index)) {
        const writer = typeOf(older.schema);
        expect(
          () => typeOf(newer.schema).createResolver(writer),
          `version ${newer.version} cannot read version ${older.version}`,
        ).not.toThrow();
      }
  });

  it('the seat events of version 1 read as version 2 have no place (row and seat number null); version 2 carries it', () => {
    for (const name of ['seatHeld', 'seatReleased', 'seatHoldExpired', 'seatSold'] as const) {
      const [v1, v2] = releasedEventSchemas(name);
      const reader = typeOf(v2?.schema ?? '');
      const written = typeOf(v1?.schema ?? '');
      const sample = written.random() as unknown as Record<string, unknown>;
      const old = reader.fromBuffer(written.toBuffer(sample), reader.createResolver(written)) as Record<
        string,
        unknown
      >;
      expect({ row: old.row, seat_number: old.seat_number }, name).toEqual({ row: null, seat_number: null });
      const now = reader.fromBuffer(reader.toBuffer({ ...sample, row: '12', seat_number: 7 })) as Record<
        string,
        unknown
      >;
      expect({ row: now.row, seat_number: now.seat_number }, name).toEqual({ row: '12', seat_number: 7 });
    }
  });
});
