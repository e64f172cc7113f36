/**
 * The email provider (bench/provider) as the bench and the rehearsal use it: a child process
 * started with spawnProvider, sent to with nodemailer as the confirmation email consumer sends,
 * read back over its control API. No stack: it needs loopback and Node only.
 *
 * The timings asserted are bounds that only a broken provider misses (a message answered before
 * its delay; messages waiting one after the other instead of side by side), not measurements.
 */
import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { spawnProvider, type ProviderProcess } from '../../bench/provider/client.js';
import { waitFor } from '../../lib/wait.js';
import { installLeakGuard, track } from '../support/leak-guard.js';

installLeakGuard();

let provider: ProviderProcess;
let stopProvider: () => Promise<void>;

beforeAll(async () => {
  provider = await spawnProvider({ acceptDelayMs: 100, maxConnections: 50 });
  stopProvider = track('smtp provider', () => provider.stop());
});
afterAll(() => stopProvider?.());

beforeEach(async () => {
  await provider.setThrottle(undefined);
  await provider.setDelay(100);
  await provider.reset();
});

/** A nodemailer transport to the provider, pooled over `connections` or one connection per send; the test closes it. */
function transportTo(
  target: { smtpPort: number },
  connections?: number,
): { transport: Transporter; close: () => Promise<void> } {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: target.smtpPort,
    secure: false,
    ignoreTLS: true,
    ...(connections === undefined ? {} : { pool: true, maxConnections: connections }),
  });
  return { transport, close: track(`smtp transport to ${target.smtpPort}`, () => transport.close()) };
}

function mail(messageId: string): SendMailOptions {
  return {
    from: 'bench@example.test',
    to: 'buyer@example.test',
    subject: 'Your order',
    text: 'Thank you.',
    messageId: `<${messageId}>`,
  };
}

function responseCode(reason: unknown): unknown {
  return typeof reason === 'object' && reason !== null ? Reflect.get(reason, 'responseCode') : undefined;
}

describe('the email provider', () => {
  it('accepts a message no sooner than its accept delay, changed at run time, and keeps its Message-ID', async () => {
    await provider.setDelay(400);
    const { transport, close } = transportTo(provider);
    const started = performance.now();
    const info = await transport.sendMail(mail('slow-1@bench.test'));
    const elapsed = performance.now() - started;
    expect(info.response).toMatch(/^250/);
    expect(elapsed).toBeGreaterThanOrEqual(400);
    expect(await provider.stats()).toMatchObject({ accepted: 1, distinct: 1, duplicates: 0, inFlight: 0 });
    expect(await provider.messageIds()).toEqual(['slow-1@bench.test']);
    await close();
  });

  it('keeps messages waiting side by side: N sends over K pooled connections take about ceil(N/K) delays, not N', async () => {
    const delay = 250;
    const [sends, connections] = [20, 5];
    await provider.setDelay(delay);
    const { transport, close } = transportTo(provider, connections);
    const started = performance.now();
    await Promise.all(Array.from({ length: sends }, (_, i) => transport.sendMail(mail(`parallel-${i}@bench.test`))));
    const elapsed = performance.now() - started;
    // Each connection sends one message at a time: at least ceil(N/K) delays; side by side shows in maxInFlight below.
    expect(elapsed).toBeGreaterThanOrEqual(Math.ceil(sends / connections) * delay);
    const stats = await provider.stats();
    expect(stats).toMatchObject({ accepted: sends, distinct: sends, duplicates: 0, inFlight: 0 });
    expect(stats.maxInFlight).toBeGreaterThan(1);
    expect(stats.maxInFlight).toBeLessThanOrEqual(connections);
    await close();
  });

  it('refuses messages over the rate with 451 while throttling, counts them, and accepts all once it is off', async () => {
    await provider.setDelay(0);
    await provider.setThrottle(2);
    const { transport, close } = transportTo(provider, 5);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 15 }, (_, i) => transport.sendMail(mail(`throttled-${i}@bench.test`))),
    );
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
    const accepted = outcomes.length - refused.length;
    // A full bucket lets the first two through, then two a second: the fifteen go out in far less
    // than the four seconds it would take to refill eight.
    expect(accepted).toBeGreaterThanOrEqual(2);
    expect(refused.length).toBeGreaterThanOrEqual(5);
    expect(refused.map((outcome) => responseCode(outcome.reason))).toEqual(refused.map(() => 451));
    expect(await provider.stats()).toMatchObject({ accepted, refused: { 421: 0, 451: refused.length } });

    await provider.setThrottle(undefined);
    await Promise.all(Array.from({ length: 10 }, (_, i) => transport.sendMail(mail(`free-${i}@bench.test`))));
    expect((await provider.stats()).accepted).toBe(accepted + 10);
    await close();
  });

  it('counts a Message-ID accepted twice as one duplicate, and forgets everything on reset', async () => {
    const { transport, close } = transportTo(provider);
    for (const id of ['twice@bench.test', 'once@bench.test', 'twice@bench.test']) await transport.sendMail(mail(id));
    expect(await provider.stats()).toMatchObject({ accepted: 3, distinct: 2, duplicates: 1 });
    expect(await provider.messageIds()).toEqual(['twice@bench.test', 'once@bench.test', 'twice@bench.test']);
    await provider.reset();
    expect(await provider.stats()).toMatchObject({ accepted: 0, distinct: 0, duplicates: 0 });
    expect(await provider.messageIds()).toEqual([]);
    await close();
  });

  it('refuses a connection beyond its limit with 421, and admits one again once a connection closed', async () => {
    const small = await spawnProvider({ acceptDelayMs: 0, maxConnections: 2 });
    const stopSmall = track('small smtp provider', () => small.stop());
    const pool = transportTo(small, 2);
    await Promise.all(['pool-1@bench.test', 'pool-2@bench.test'].map((id) => pool.transport.sendMail(mail(id))));
    // The pool keeps both connections open, idle.
    expect((await small.stats()).connections).toBe(2);

    const third = transportTo(small);
    const refusal = await third.transport.sendMail(mail('third@bench.test')).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(responseCode(refusal)).toBe(421);
    expect(await small.stats()).toMatchObject({ accepted: 2, refused: { 421: 1, 451: 0 } });

    await pool.close();
    await waitFor(async () => (await small.stats()).connections === 0, {
      timeoutMs: 10_000,
      description: 'the pooled connections to close',
    });
    await third.transport.sendMail(mail('third@bench.test'));
    expect((await small.stats()).accepted).toBe(3);
    await third.close();
    await stopSmall();
  });

  it('answers the messages in flight before it stops on SIGTERM', async () => {
    const stopping = await spawnProvider({ acceptDelayMs: 1500 });
    const stop = track('stopping smtp provider', () => stopping.stop());
    const { transport, close } = transportTo(stopping);
    const sending = transport.sendMail(mail('last@bench.test'));
    await waitFor(async () => (await stopping.stats()).inFlight === 1, {
      timeoutMs: 10_000,
      description: 'the message to be in flight',
    });
    await stop();
    expect((await sending).response).toMatch(/^250/);
    await close();
  });

  it('fails to start with the reason and the setting to change when its port is taken', async () => {
    await expect(spawnProvider({ smtpPort: provider.smtpPort })).rejects.toThrow(
      /exited \(code 1\) before it listened; its stderr ended with:\n.*EADDRINUSE.*SMTP_PROVIDER_SMTP_PORT/s,
    );
  });
});
