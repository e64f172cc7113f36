/**
 * Kafka Connect's lifecycle and offsets API (Kafka 3.5+, KIP-875): stop, resume, read the live
 * configuration and reset the stored source offsets of a stopped connector.
 */
import { PipelineError } from '../lib/errors.js';
import { type ConnectApi, connectFetch, connectorStatus } from './connect-client.js';

async function connectCall(connect: ConnectApi, method: string, path: string, what: string): Promise<Response> {
  const response = await connectFetch(connect, path, { method, headers: { accept: 'application/json' } });
  if (response.status === 404)
    throw new PipelineError('connector_missing', `${what}: Connect has no connector at ${path}; check CONNECTOR_NAME`);
  if (!response.ok)
    throw new PipelineError(
      'connect_request_failed',
      `${what}: HTTP ${response.status} ${(await response.text()).slice(0, 2000)}`,
    );
  return response;
}

const connectorPath = (name: string, tail = '') => `/connectors/${encodeURIComponent(name)}${tail}`;

/** The configuration Connect runs the connector with (placeholders already filled). */
export async function liveConnectorConfig(connect: ConnectApi, name: string): Promise<Record<string, string>> {
  const response = await connectCall(
    connect,
    'GET',
    connectorPath(name, '/config'),
    `reading the configuration of ${name}`,
  );
  return (await response.json()) as Record<string, string>;
}

/** PUT /stop: the tasks shut down and let go of the replication slot (pause would keep it active). */
export async function stopConnector(connect: ConnectApi, name: string): Promise<void> {
  await connectCall(connect, 'PUT', connectorPath(name, '/stop'), `stopping ${name}`);
}

export async function resumeConnector(connect: ConnectApi, name: string): Promise<void> {
  await connectCall(connect, 'PUT', connectorPath(name, '/resume'), `resuming ${name}`);
}

/** DELETE /offsets: forgets the stored offsets. Connect refuses it unless the connector is STOPPED. */
export async function resetConnectorOffsets(connect: ConnectApi, name: string): Promise<void> {
  await connectCall(connect, 'DELETE', connectorPath(name, '/offsets'), `resetting the offsets of ${name}`);
}

/** The connector's state (RUNNING, PAUSED, STOPPED, FAILED…), or undefined when Connect does not know it. */
export async function connectorState(connect: ConnectApi, name: string): Promise<string | undefined> {
  return (await connectorStatus(connect, name))?.connector.state;
}
