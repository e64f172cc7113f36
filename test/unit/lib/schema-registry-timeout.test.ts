/**
 * A registry that accepts connections and never answers (hung, or half-open behind a proxy): every
 * request to it fails at the registry's request timeout, the client's and this project's own, and
 * a record whose writer schema is not cached fails as the infrastructure's
 * (schema_registry_unavailable): the runtime holds the partition and tries again, instead of the
 * decode waiting for good with nothing logged.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCloudEvent } from '../../../consumers/runtime/cloud-event.js';
import { TransientError } from '../../../consumers/runtime/failures.js';
import { routerHeaders } from '../../../consumers/runtime/testing/index.js';
import type { SourceRecord } from '../../../consumers/runtime/types.js';
import { REGISTRY_REQUEST_TIMEOUT_MS, createSchemaRegistry, latestSchema } from '../../../lib/schema-registry.js';

const TIMEOUT_MS = 300;
/** Far less than an unbounded wait, far more than the timeout: the test's own bound. */
const WITHIN_MS = 4_000;

let silent: net.Server;
let url: string;
let selective: http.Server;
/** A registry that holds the reader schema (POST /subjects/<name> answers 200) and never answers GET /schemas/ids/<id>. */
let selectiveUrl: string;
const sockets = new Set<net.Socket>();

function keep(socket: net.Socket): void {
  sockets.add(socket);
  socket.on('error', () => undefined);
  socket.on('close', () => sockets.delete(socket));
}

beforeAll(async () => {
  // Reads whatever arrives and never writes a byte back.
  silent = net.createServer((socket) => {
    keep(socket);
    socket.on('data', () => undefined);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/apis/ccompat/v7`;

  selective = http.createServer((request, response) => {
    if (request.url?.includes('/schemas/ids/')) return; // never answered
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/vnd.schemaregistry.v1+json' });
      response.end(JSON.stringify({ subject: 'x', version: 1, id: 1, schema: READER_SCHEMA }));
    });
  });
  selective.on('connection', keep);
  await new Promise<void>((resolve) => selective.listen(0, '127.0.0.1', resolve));
  selectiveUrl = `http://127.0.0.1:${(selective.address() as net.AddressInfo).port}/apis/ccompat/v7`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all([silent, selective].map((server) => new Promise((resolve) => server.close(resolve))));
});

const READER_SCHEMA = JSON.stringify({
  type: 'record',
  name: 'SeatHeld',
  namespace: 'com.stagefront.test',
  fields: [{ name: 'seatId', type: 'string' }],
});

const ID = '0190b3a4-5c6d-7e8f-9a0b-1c2d3e4f5a6b';

function seatHeldRecord(schemaId: number): SourceRecord {
  const value = Buffer.alloc(6);
  value.writeUInt8(0, 0);
  value.writeUInt32BE(schemaId, 1);
  return {
    topic: 't',
    partition: 0,
    offset: '7',
    key: Buffer.from('s:A-1-1'),
    value,
    headers: routerHeaders({
      id: ID,
      type: 'com.stagefront.seat.held',
      key: 's:A-1-1',
      time: '2026-12-01T10:00:00.000Z',
    }),
    timestamp: '0',
  };
}

describe('a registry that never answers', () => {
  it('bounds every request by default', () => {
    expect(REGISTRY_REQUEST_TIMEOUT_MS).toBeGreaterThan(0);
    expect(createSchemaRegistry(url).requestTimeoutMs).toBe(10_000);
  });

  it("fails the client's request at the timeout instead of waiting for good", async () => {
    const registry = createSchemaRegistry(url, { requestTimeoutMs: TIMEOUT_MS });
    const started = Date.now();
    await expect(registry.client.getSchema(1)).rejects.toThrow(/timeout/i);
    expect(Date.now() - started).toBeLessThan(WITHIN_MS);
  });

  it("fails this project's own registry calls at the timeout, naming the registry", async () => {
    const registry = createSchemaRegistry(url, { requestTimeoutMs: TIMEOUT_MS });
    const started = Date.now();
    await expect(latestSchema(registry, 'x-value')).rejects.toThrow(/schema registry at .* does not answer/);
    expect(Date.now() - started).toBeLessThan(WITHIN_MS);
  });

  /** Decodes a seat.held record of schema id 41 and returns what it threw. */
  async function decodeFailure(registryUrl: string, readerSchema?: string): Promise<unknown> {
    const registry = createSchemaRegistry(registryUrl, { requestTimeoutMs: TIMEOUT_MS });
    const spec = { whenLate: 'keep-retrying' as const, parse: (p: unknown) => p };
    const eventTypes = { 'com.stagefront.seat.held': readerSchema === undefined ? spec : { ...spec, readerSchema } };
    return decodeCloudEvent(registry, seatHeldRecord(41), eventTypes).then(
      () => new Error('the record decoded'),
      (err: unknown) => err,
    );
  }

  it(
    'makes a record whose writer schema is not cached the infrastructure failure schema_registry_unavailable, saying the registry did not answer',
    async () => {
      const error = await decodeFailure(url);
      expect(error).toBeInstanceOf(TransientError);
      expect((error as TransientError).code).toBe('schema_registry_unavailable');
      expect((error as Error).message).toMatch(/cannot read schema id 41: .*timeout/i);
      expect((error as Error).message).not.toMatch(/not found|not registered/);
    },
    WITHIN_MS * 2,
  );

  it(
    'never makes the record poison when only the schema lookup goes unanswered, though the registry shows it holds the reader schema',
    async () => {
      const error = await decodeFailure(selectiveUrl, READER_SCHEMA);
      expect(error).toBeInstanceOf(TransientError);
      expect((error as TransientError).code).toBe('schema_registry_unavailable');
      expect((error as Error).message).toMatch(/cannot read schema id 41: .*timeout/i);
    },
    WITHIN_MS * 2,
  );
});
