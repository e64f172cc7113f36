import { Counter, register as globalRegistry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createMetricsRegistry, serveHttp } from '../../../lib/metrics.js';
import type { HttpEndpoint } from '../../../lib/metrics.js';

describe('metrics over HTTP', () => {
  const endpoints: HttpEndpoint[] = [];
  afterEach(async () => {
    await Promise.all(endpoints.splice(0).map((endpoint) => endpoint.close()));
  });

  async function serve(options: Omit<Parameters<typeof serveHttp>[0], 'port'>): Promise<HttpEndpoint> {
    const endpoint = await serveHttp({ ...options, port: 0 });
    endpoints.push(endpoint);
    return endpoint;
  }

  it('serves the program registry, not the global one, on a port chosen by the system', async () => {
    const registry = createMetricsRegistry('slot-monitor');
    new Counter({ name: 'slot_alerts_total', help: 'Alerts sent', registers: [registry] }).inc(2);
    const endpoint = await serve({ registry });

    expect(endpoint.port).toBeGreaterThan(0);
    expect(endpoint.url).toBe(`http://127.0.0.1:${endpoint.port}`);
    const response = await fetch(`${endpoint.url}/metrics`);
    const body = await response.text();

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    expect(body).toContain('slot_alerts_total{program="slot-monitor"} 2');
    expect(body).toMatch(/^process_cpu_user_seconds_total\{program="slot-monitor"\} /m);
    expect(globalRegistry.getSingleMetric('slot_alerts_total')).toBeUndefined();
  });

  it('lets two programs in one process own a registry each', async () => {
    const first = createMetricsRegistry('a');
    const second = createMetricsRegistry('b');
    expect(await second.metrics()).toContain('program="b"');
    expect(await first.metrics()).not.toContain('program="b"');
  });

  it('answers /healthz and /readyz with 200 ok, or 503 with the reason', async () => {
    let ready: boolean | Error = false;
    const endpoint = await serve({
      registry: createMetricsRegistry('consumer'),
      health: () => true,
      ready: async () => {
        if (ready instanceof Error) throw ready;
        return ready;
      },
    });
    const get = async (path: string) => {
      const response = await fetch(`${endpoint.url}${path}`);
      return [response.status, await response.text()];
    };

    expect(await get('/healthz')).toEqual([200, 'ok\n']);
    expect(await get('/readyz')).toEqual([503, 'not ready: check returned false\n']);
    ready = new Error('consumer has not joined group g1');
    expect(await get('/readyz')).toEqual([503, 'not ready: consumer has not joined group g1\n']);
    ready = true;
    expect(await get('/readyz')).toEqual([200, 'ok\n']);
    expect((await get('/nope'))[0]).toBe(404);
  });

  it('stops listening on close', async () => {
    const endpoint = await serveHttp({ registry: createMetricsRegistry('x'), port: 0 });
    await fetch(`${endpoint.url}/healthz`);
    await endpoint.close();
    await expect(fetch(`${endpoint.url}/healthz`)).rejects.toThrow();
  });

  it('reports a port in use as a PipelineError', async () => {
    const endpoint = await serve({ registry: createMetricsRegistry('x') });
    await expect(serveHttp({ registry: createMetricsRegistry('y'), port: endpoint.port })).rejects.toMatchObject({
      code: 'http_listen_failed',
    });
  });
});
