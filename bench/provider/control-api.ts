/**
 * The email provider's control API on loopback (node:http): read its counts, switch throttling,
 * change the accept delay, start the counts again.
 *
 *   GET  /stats         → ProviderStats as JSON
 *   GET  /message-ids   → the accepted Message-IDs as a JSON array, in order, repeats kept
 *   POST /throttle      { "ratePerSecond": n } or { "off": true }   → 204
 *   POST /delay         { "acceptDelayMs": n }                      → 204
 *   POST /reset                                                     → 204
 *
 * A bad body is answered 400 with the reason.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { Provider } from './provider.js';

const throttleBody = z.union([
  z.object({ ratePerSecond: z.number().int().min(1) }).strict(),
  z.object({ off: z.literal(true) }).strict(),
]);

const delayBody = z.object({ acceptDelayMs: z.number().int().min(0).max(600_000) }).strict();

const BODY_LIMIT = 4096;

class BadRequest extends Error {}

function reply(res: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) {
    text += (chunk as Buffer).toString('utf8');
    if (text.length > BODY_LIMIT) throw new BadRequest(`the body is longer than ${BODY_LIMIT} characters`);
  }
  try {
    return JSON.parse(text === '' ? '{}' : text);
  } catch {
    throw new BadRequest('the body is not JSON');
  }
}

async function parseBody<T>(req: IncomingMessage, schema: z.ZodType<T>, example: string): Promise<T> {
  const parsed = schema.safeParse(await readJson(req));
  if (!parsed.success) throw new BadRequest(`expected a body like ${example}`);
  return parsed.data;
}

async function route(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  const request = `${req.method ?? 'GET'} ${path}`;
  switch (request) {
    case 'GET /stats':
      return reply(res, 200, provider.stats());
    case 'GET /message-ids':
      return reply(res, 200, provider.messageIds());
    case 'POST /throttle': {
      const body = await parseBody(req, throttleBody, '{"ratePerSecond": 50} or {"off": true}');
      provider.setThrottle('off' in body ? undefined : body.ratePerSecond);
      return reply(res, 204);
    }
    case 'POST /delay': {
      const body = await parseBody(req, delayBody, '{"acceptDelayMs": 100} (0 to 600000)');
      provider.setAcceptDelay(body.acceptDelayMs);
      return reply(res, 204);
    }
    case 'POST /reset':
      provider.reset();
      return reply(res, 204);
    default:
      return reply(res, 404, {
        error: `no ${request}: try GET /stats, GET /message-ids, POST /throttle, POST /delay or POST /reset`,
      });
  }
}

/** Serves the control API for `provider` on 127.0.0.1:`port` (0 picks a free port). */
export async function serveControlApi(
  provider: Provider,
  port: number,
): Promise<{ port: number; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    route(provider, req, res).catch((err: unknown) => {
      if (res.headersSent) return res.destroy();
      const message = err instanceof Error ? err.message : String(err);
      reply(res, err instanceof BadRequest ? 400 : 500, { error: message });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
