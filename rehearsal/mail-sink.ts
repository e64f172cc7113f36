import { SMTPServer } from 'smtp-server';

export interface MailSink {
  /** Message-IDs received (the consumer sets it to the event's ce_id). */
  messageIds: string[];
  close(): Promise<void>;
}

/** A real SMTP server on loopback that accepts every message and remembers its Message-ID. */
export async function startMailSink(port: number): Promise<MailSink> {
  const messageIds: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      let head = '';
      stream.on('data', (chunk: Buffer) => {
        if (head.length < 16_384) head += chunk.toString('utf8');
      });
      stream.on('end', () => {
        const id = /^message-id:\s*<?([^>\r\n]+)>?/im.exec(head)?.[1];
        if (id) messageIds.push(id);
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return { messageIds, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
