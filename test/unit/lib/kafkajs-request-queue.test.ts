/**
 * The patch to kafkajs 2.2.4 that `npm ci` applies (patches/, package.json's postinstall): a
 * connection's request queue with nothing queued and no throttle schedules no check. Unpatched,
 * every answered request scheduled one at a negative delay (Node runs it after 1 ms), which
 * scheduled the next: each connection of every program woke a thousand times a second for good,
 * and Node 24 printed a TimeoutNegativeWarning in every program. A throttled queue still sends
 * what it holds once the throttle ends.
 */
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sleep } from '../../../lib/wait.js';

interface Entry {
  correlationId: number;
  apiName: string;
  apiKey: number;
  apiVersion: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

interface RequestQueue {
  push(request: { entry: Entry; expectResponse: boolean; sendRequest: () => void }): void;
  fulfillRequest(response: { correlationId: number; payload: Buffer; size: number }): void;
  maybeThrottle(ms: number): void;
  checkPendingRequests(): void;
  destroy(): void;
  throttleCheckTimeoutId: unknown;
  pending: unknown[];
}

const require = createRequire(import.meta.url);
const RequestQueueClass = require('kafkajs/src/network/requestQueue/index.js') as new (options: object) => RequestQueue;

const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const queues: RequestQueue[] = [];

function queue(): RequestQueue {
  const q = new RequestQueueClass({
    maxInFlightRequests: null,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: 'request-queue-test',
    broker: '127.0.0.1:1',
    logger: silent,
  });
  queues.push(q);
  return q;
}

function entry(correlationId: number): Entry {
  return { correlationId, apiName: 'Metadata', apiKey: 3, apiVersion: 5, resolve: () => {}, reject: () => {} };
}

afterEach(() => {
  for (const q of queues.splice(0)) q.destroy();
  vi.restoreAllMocks();
});

describe('kafkajs request queue (patched)', () => {
  it('schedules nothing once its only request is answered and nothing is queued', async () => {
    const q = queue();
    q.push({ entry: entry(1), expectResponse: true, sendRequest: () => {} });
    const checks = vi.spyOn(q, 'checkPendingRequests');
    q.fulfillRequest({ correlationId: 1, payload: Buffer.alloc(0), size: 0 });
    expect(q.throttleCheckTimeoutId).toBeNull();
    await sleep(50);
    // The answer's own check, and none after it (unpatched: one every millisecond or so).
    expect(checks).toHaveBeenCalledTimes(1);
  });

  it('prints no TimeoutNegativeWarning for an answered request', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const q = queue();
      q.push({ entry: entry(1), expectResponse: true, sendRequest: () => {} });
      q.fulfillRequest({ correlationId: 1, payload: Buffer.alloc(0), size: 0 });
      await sleep(20);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((w) => w.name)).not.toContain('TimeoutNegativeWarning');
  });

  it('still sends a request queued behind a throttle once the throttle ends', async () => {
    const q = queue();
    q.maybeThrottle(30);
    let sent = 0;
    q.push({ entry: entry(7), expectResponse: true, sendRequest: () => (sent += 1) });
    expect(sent).toBe(0);
    expect(q.pending).toHaveLength(1);
    await sleep(120);
    expect(sent).toBe(1);
    expect(q.pending).toHaveLength(0);
  });
});
