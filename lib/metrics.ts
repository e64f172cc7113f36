/**
 * Each program owns one prom-client Registry (never the global one) and serves it
 * over HTTP together with its health and readiness checks.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { PipelineError, errorMessage } from './errors.js';

/** A registry with Node's default metrics (no name prefix) and the label `program` on every series. */
export function createMetricsRegistry(program: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ program });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Returns true (or resolves to true) when fine; false or a throw means not fine, the message is the reason. */
export type Check = () => boolean | Promise<boolean>;

export interface ServeHttpOptions {
  registry: Registry;
  /** 0 picks a free port; the real one is in the result. */
  port: number;
  host?: string;
  /** Liveness, GET /healthz. Defaults to always fine. */
  health?: Check;
  /** Readiness, GET /readyz. Defaults to always fine. */
  ready?: Check;
}

export interface HttpEndpoint {
  /** `http://host:port`, without a trailing slash. */
  url: string;
  port: number;
  close(): Promise<void>;
}

async function runCheck(check: Check): Promise<{ ok: true } | { ok: false; reason: string }> {
  try {
    return (await check()) ? { ok: true } : { ok: false, reason: 'check returned false' };
  } catch (err) {
    return { ok: false, reason: errorMessage(err) };
  }
}

function reply(res: ServerResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}

async function replyWithCheck(res: ServerResponse, what: string, check: Check): Promise<void> {
  const outcome = await runCheck(check);
  if (outcome.ok) reply(res, 200, 'ok\n');
  else reply(res, 503, `not ${what}: ${outcome.reason}\n`);
}

function routeRequest(options: ServeHttpOptions) {
  const { registry, health = () => true, ready = () => true } = options;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, 'only GET\n');
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    switch (path) {
      case '/metrics':
        return reply(res, 200, await registry.metrics(), registry.contentType);
      case '/healthz':
        return replyWithCheck(res, 'healthy', health);
      case '/readyz':
        return replyWithCheck(res, 'ready', ready);
      default:
        return reply(res, 404, 'not found: try /metrics, /healthz or /readyz\n');
    }
  };
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => {
      reject(
        new PipelineError(
          'http_listen_failed',
          `Cannot listen on ${host}:${port} (${err.message}); choose a free port or stop what holds it.`,
          {
            cause: err,
          },
        ),
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Serves GET /metrics (Prometheus text), /healthz and /readyz (200 `ok`, or 503 with the reason). */
export async function serveHttp(options: ServeHttpOptions): Promise<HttpEndpoint> {
  const host = options.host ?? '127.0.0.1';
  const handle = routeRequest(options);
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) reply(res, 500, `error: ${errorMessage(err)}\n`);
      else res.destroy();
    });
  });
  const port = await listen(server, options.port, host);
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
