/** The registry's URL as messages name it, and the subject a reader schema is registered under. */
import { describe, expect, it } from 'vitest';
import { registryAddress, subjectOfSchema } from '../../../lib/schema-registry.js';

describe('registryAddress', () => {
  it('drops the user name and password, keeps the rest', () => {
    expect(registryAddress('https://svc:s3cret@registry.example.test:8443/apis/ccompat/v7')).toBe(
      'https://registry.example.test:8443/apis/ccompat/v7',
    );
    expect(registryAddress('http://127.0.0.1:18081/apis/ccompat/v7/')).toBe('http://127.0.0.1:18081/apis/ccompat/v7');
    expect(registryAddress('not a url')).toBe('(an unparsable registry URL)');
  });
});

describe('subjectOfSchema', () => {
  it("is the record's full name", () => {
    expect(
      subjectOfSchema(
        JSON.stringify({ type: 'record', name: 'SeatHeld', namespace: 'com.stagefront.events', fields: [] }),
      ),
    ).toBe('com.stagefront.events.SeatHeld');
    expect(subjectOfSchema(JSON.stringify({ type: 'record', name: 'a.b.C', namespace: 'ignored', fields: [] }))).toBe(
      'a.b.C',
    );
    expect(subjectOfSchema(JSON.stringify({ type: 'record', name: 'Plain', fields: [] }))).toBe('Plain');
    expect(subjectOfSchema('"string"')).toBeUndefined();
    expect(subjectOfSchema('{not json')).toBeUndefined();
  });
});
