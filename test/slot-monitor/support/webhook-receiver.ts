/**
 * An HTTP server that records what Alertmanager (webhook receiver, path /alertmanager; the dead
 * man's switch receiver, path /deadmansswitch) and the monitors' generic webhook (path /generic)
 * post to it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedAlert {
  receivedAt: number;
  /** The Alertmanager receiver that notified: "webhook" or "deadmansswitch". */
  receiver: string;
  generatorURL: string;
  status: 'firing' | 'resolved';
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  endsAt: string;
}

interface GenericWebhookCall {
  receivedAt: number;
  body: {
    status: string;
    alertname: string;
    summary: string;
    description: string;
    labels: Record<string, string>;
    runbook: string[];
  };
}

export interface WebhookReceiver {
  alertmanagerUrl: string;
  deadMansSwitchUrl: string;
  genericUrl: string;
  /** Alerts from Alertmanager notifications (both receivers), one entry per alert per notification, in arrival order. */
  alerts: ReceivedAlert[];
  generic: GenericWebhookCall[];
  close(): Promise<void>;
}

interface AlertmanagerPayload {
  receiver: string;
  alerts: {
    status: 'firing' | 'resolved';
    labels: Record<string, string>;
    annotations: Record<string, string>;
    endsAt: string;
    generatorURL: string;
  }[];
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const alerts: ReceivedAlert[] = [];
  const generic: GenericWebhookCall[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => {
      const receivedAt = Date.now();
      const body: unknown = JSON.parse(text);
      if (req.url === '/alertmanager' || req.url === '/deadmansswitch') {
        const payload = body as AlertmanagerPayload;
        for (const alert of payload.alerts) {
          const { status, labels, annotations, endsAt, generatorURL } = alert;
          alerts.push({
            receivedAt,
            receiver: payload.receiver,
            status,
            name: labels.alertname ?? '',
            labels,
            annotations,
            endsAt,
            generatorURL,
          });
        }
      } else {
        generic.push({ receivedAt, body: body as GenericWebhookCall['body'] });
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    alertmanagerUrl: `http://127.0.0.1:${port}/alertmanager`,
    deadMansSwitchUrl: `http://127.0.0.1:${port}/deadmansswitch`,
    genericUrl: `http://127.0.0.1:${port}/generic`,
    alerts,
    generic,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** The alerts received with this name and status (optionally for one slot). */
export function received(
  receiver: WebhookReceiver,
  name: string,
  status: 'firing' | 'resolved',
  slot?: string,
): ReceivedAlert[] {
  return receiver.alerts.filter(
    (a) => a.name === name && a.status === status && (slot === undefined || a.labels.slot_name === slot),
  );
}
