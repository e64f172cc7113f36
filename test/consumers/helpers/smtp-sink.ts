/** A real SMTP server on loopback that keeps what it receives; it can refuse chosen messages with a 4xx once. */
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { track } from '../../support/leak-guard.js';

export interface ReceivedMail {
  messageId: string;
  to: string[];
  raw: string;
}

export interface SmtpSink {
  port: number;
  received: ReceivedMail[];
  /** The next delivery whose body contains `marker` is answered 451 (try again later). */
  refuseOnce(marker: string): void;
  close(): Promise<void>;
}

/** `port` and `received` let a sink be started again where a closed one was (an SMTP outage). */
export async function startSmtpSink(options: { port?: number; received?: ReceivedMail[] } = {}): Promise<SmtpSink> {
  const received: ReceivedMail[] = options.received ?? [];
  const refuse = new Set<string>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const marker = [...refuse].find((m) => raw.includes(m));
        if (marker !== undefined) {
          refuse.delete(marker);
          callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
          return;
        }
        const messageId = /^Message-ID:\s*(\S+)/im.exec(raw)?.[1] ?? '';
        received.push({ messageId, to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const close = track('smtp sink', () => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port, received, refuseOnce: (marker) => refuse.add(marker), close };
}
