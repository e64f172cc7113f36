import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { metricsAddress, serveProgramEndpoint } from '../../../lib/long-running-program.js';
import { Releasers } from '../../../lib/shutdown.js';
import { captureLogs } from './log-capture.js';

describe('serveProgramEndpoint', () => {
  it('serves the checks it is given and registers its own close', async () => {
    const releasers = new Releasers(captureLogs('silent').logger);
    let ready = false;
    const http = await serveProgramEndpoint(releasers, {
      registry: new Registry(),
      port: 0,
      host: '127.0.0.1',
      health: () => true,
      ready: () => ready,
    });
    expect(releasers.size).toBe(1);
    expect((await fetch(`${http.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${http.url}/readyz`)).status).toBe(503);
    ready = true;
    expect((await fetch(`${http.url}/readyz`)).status).toBe(200);
    expect(await releasers.releaseAll()).toEqual([]);
    await expect(fetch(`${http.url}/healthz`)).rejects.toThrow();
  });

  it('logs the scrape address as the running line field "metrics"', () => {
    expect(metricsAddress({ url: 'http://127.0.0.1:9190' })).toBe('http://127.0.0.1:9190/metrics');
  });
});
