/**
 * A TCP forwarder that can go silent: `silence()` and every connection, open or new, is accepted
 * and kept open but nothing crosses it again in either direction, as a connection is after a
 * failover behind a proxy or a cut network (no FIN, no RST). `speak()` forwards new connections
 * again; the connections it silenced stay silent for good, as half-open ones do.
 */
import net from 'node:net';
import { track } from './leak-guard.js';

export interface SilentProxy {
  port: number;
  /** The URL with its host and port replaced by the proxy's. */
  through(url: string): string;
  silence(): void;
  speak(): void;
  /** Connections forwarded since the start, and those silenced. */
  counts(): { forwarded: number; silenced: number };
  close(): Promise<void>;
}

export async function startSilentProxy(targetPort: number): Promise<SilentProxy> {
  const live = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const all = new Set<net.Socket>();
  let silent = false;
  let forwarded = 0;
  let silenced = 0;
  const mute = (pair: { client: net.Socket; upstream: net.Socket }) => {
    pair.client.unpipe(pair.upstream);
    pair.upstream.unpipe(pair.client);
    // Whatever arrives is read and dropped: the peer sees a connection that never answers.
    pair.client.on('data', () => undefined);
    pair.upstream.on('data', () => undefined);
    live.delete(pair);
    silenced += 1;
  };
  const server = net.createServer((client) => {
    all.add(client);
    client.on('error', () => undefined);
    client.on('close', () => all.delete(client));
    if (silent) {
      client.on('data', () => undefined);
      silenced += 1;
      return;
    }
    const upstream = net.connect({ host: '127.0.0.1', port: targetPort });
    all.add(upstream);
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => all.delete(upstream));
    const pair = { client, upstream };
    live.add(pair);
    forwarded += 1;
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  const close = track(`silent proxy on port ${port}`, async () => {
    for (const socket of all) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    port,
    through(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    silence() {
      silent = true;
      for (const pair of [...live]) mute(pair);
    },
    speak() {
      silent = false;
    },
    counts: () => ({ forwarded, silenced }),
    close,
  };
}
