/** Kafka Connect's REST API: the few calls the connector command needs. */
import { z } from 'zod';
import { PipelineError } from '../lib/errors.js';
import { type Setting, type SettingParser, zString } from '../lib/settings.js';
import { waitFor } from '../lib/wait.js';

export interface ConnectorStatus {
  name: string;
  /** worker_id: the worker (advertised host:port) that runs the connector or the task. */
  connector: { state: string; trace?: string; worker_id?: string };
  tasks: { id: number; state: string; trace?: string; worker_id?: string }[];
}

/**
 * How a program reaches Kafka Connect: its workers (CONNECT_URL) and the user it signs in as
 * (CONNECT_USERNAME, CONNECT_PASSWORD), checked by the workers' basic-auth REST extension. A
 * program's parsed settings have exactly these fields, so they are passed as they are.
 */
export interface ConnectApi {
  readonly connectUrl: string;
  readonly connectUsername: string;
  readonly connectPassword: string;
}

/**
 * The workers' REST URLs in a CONNECT_URL: one URL, or several workers of one Connect cluster
 * separated by commas ("http://a:8083,http://b:8083"). Any worker answers for the whole cluster.
 */
function connectUrls(connectUrl: string): string[] {
  return connectUrl
    .split(',')
    .map((url) => url.trim().replace(/\/+$/, ''))
    .filter((url) => url !== '');
}

/** CONNECT_URL's parser: one or more http(s) URLs separated by commas. */
function zConnectUrls(): SettingParser<string> {
  const schema = z
    .string()
    .transform(connectUrls)
    .pipe(z.array(z.url({ protocol: /^https?$/ })).min(1))
    .transform((urls) => urls.join(','));
  return {
    schema,
    expected: 'one or more http URLs separated by commas (workers of one Connect cluster)',
    example: 'http://connect-0:8083,http://connect-1:8083',
  };
}

/**
 * The settings every program that calls Connect has, in one place (spread into each table): the
 * workers and the credentials of a user in the workers' REST users file.
 */
export function connectApiSettings(program: string) {
  return {
    connectUrl: {
      env: 'CONNECT_URL',
      default: 'http://127.0.0.1:18083',
      parser: zConnectUrls(),
      description: `Kafka Connect REST API; several workers of one Connect cluster separated by commas: each call goes to the first that answers, so ${program} works while a worker is down.`,
    },
    connectUsername: {
      env: 'CONNECT_USERNAME',
      default: '',
      // Basic authentication sends "user:password": a colon would end the user name early.
      parser: zString({
        pattern: /^[^:\s]*$/,
        expected: 'a user name without colons or spaces',
        example: 'stagefront-connect',
      }),
      description:
        "User that signs in to the Kafka Connect REST API (HTTP basic authentication, checked by the workers' BasicAuthSecurityRestExtension against their REST users file; the native stack and docker compose require it). Empty sends no credentials: only for a Connect whose REST API is closed otherwise (Kubernetes, where Strimzi's operator manages Connect and NetworkPolicies admit only it and the tools).",
    },
    connectPassword: {
      env: 'CONNECT_PASSWORD',
      default: '',
      parser: zString({ example: 'change-me' }),
      description:
        "Password of CONNECT_USERNAME in the Connect workers' REST users file (required when CONNECT_USERNAME is set).",
      secret: true,
    },
  } as const satisfies Record<string, Setting<string>>;
}

/** The Authorization header of HTTP basic authentication (RFC 7617, UTF-8) for this user. */
export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

/**
 * The error for a 401 from Connect: which settings to fix and how, never their values (the
 * user name included: it is half of the credentials).
 */
export function connectUnauthorized(url: string): PipelineError {
  return new PipelineError(
    'connect_unauthorized',
    `Kafka Connect at ${url} refused the credentials (HTTP 401): CONNECT_USERNAME and CONNECT_PASSWORD must name a user and its password in the workers' REST users file; set both to such a user (the native stack's: docs/operations.md, "Kafka Connect's REST API")`,
    { details: { url } },
  );
}

/**
 * One REST call, to the first worker that answers: a worker that refuses the connection or times
 * out is passed over for the next (a worker's death must not stop the command); an HTTP answer,
 * error or not, is the cluster's answer. Every call made through here may be repeated (PUT of a
 * configuration, restart, stop, resume, delete), so one that timed out is safe to send again to the
 * next worker. When none answers, one error names them all. Every call carries the credentials
 * (basic authentication) when they are set; a 401 is a PipelineError naming CONNECT_USERNAME and
 * CONNECT_PASSWORD.
 */
export async function connectFetch(connect: ConnectApi, path: string, init: RequestInit = {}): Promise<Response> {
  const failures: string[] = [];
  const urls = connectUrls(connect.connectUrl);
  const headers = new Headers(init.headers);
  if (connect.connectUsername !== '' || connect.connectPassword !== '') {
    if (connect.connectUsername === '' || connect.connectPassword === '') {
      throw new PipelineError(
        'connect_unauthorized',
        "CONNECT_USERNAME and CONNECT_PASSWORD go together: set both (the user of the Connect workers' REST users file and its password), or neither for a Connect whose REST API takes no credentials.",
      );
    }
    headers.set('authorization', basicAuthorization(connect.connectUsername, connect.connectPassword));
  }
  let lastCause: unknown;
  for (const url of urls) {
    let response: Response;
    try {
      response = await fetch(`${url}${path}`, { ...init, headers, signal: AbortSignal.timeout(30_000) });
    } catch (cause) {
      lastCause = cause;
      failures.push(
        `${url}: ${cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause)}`,
      );
      continue;
    }
    // Every worker checks the same users file: one that refuses the credentials speaks for all.
    if (response.status === 401) {
      await response.body?.cancel();
      throw connectUnauthorized(url);
    }
    return response;
  }
  const which =
    urls.length === 1
      ? `Kafka Connect at ${urls[0]} does not answer`
      : `none of the ${urls.length} Kafka Connect workers answers (${failures.join('; ')})`;
  throw new PipelineError(
    'connect_unreachable',
    `${which}; start the stack (npm run stack -- start) or set CONNECT_URL (several workers: comma separated)`,
    {
      cause: lastCause,
      details: { failures },
    },
  );
}

function connectRequest(connect: ConnectApi, path: string, init: RequestInit = {}): Promise<Response> {
  return connectFetch(connect, path, {
    ...init,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
  });
}

async function expectOk(response: Response, what: string): Promise<Response> {
  if (response.ok) return response;
  const body = await response.text();
  throw new PipelineError('connect_request_failed', `${what}: HTTP ${response.status} ${body.slice(0, 2000)}`);
}

/** Creates the connector or updates its configuration (PUT is idempotent). */
export async function putConnectorConfig(
  connect: ConnectApi,
  name: string,
  config: Record<string, string>,
): Promise<void> {
  const response = await connectRequest(connect, `/connectors/${encodeURIComponent(name)}/config`, {
    method: 'PUT',
    body: JSON.stringify(config),
  });
  await expectOk(response, `creating or updating connector ${name}`);
}

/** Asks Connect to validate a configuration; returns one line per field error. */
export async function validateConnectorConfig(connect: ConnectApi, config: Record<string, string>): Promise<string[]> {
  const plugin = (config['connector.class'] ?? '').split('.').pop() ?? '';
  const response = await connectRequest(connect, `/connector-plugins/${plugin}/config/validate`, {
    method: 'PUT',
    body: JSON.stringify(config),
  });
  const body = (await (await expectOk(response, 'validating the connector configuration')).json()) as {
    configs: { value?: { name: string; errors?: string[] } | null }[];
  };
  return body.configs.flatMap((c) => (c.value?.errors ?? []).map((e) => `${c.value?.name}: ${e}`));
}

export async function connectorStatus(connect: ConnectApi, name: string): Promise<ConnectorStatus | undefined> {
  const response = await connectRequest(connect, `/connectors/${encodeURIComponent(name)}/status`);
  if (response.status === 404) return undefined;
  return (await (await expectOk(response, `status of ${name}`)).json()) as ConnectorStatus;
}

/** The connector and every one of its tasks RUNNING (Connect's word; the slot may say otherwise). */
export function isRunning(status: ConnectorStatus | undefined): boolean {
  return (
    status?.connector.state === 'RUNNING' && status.tasks.length > 0 && status.tasks.every((t) => t.state === 'RUNNING')
  );
}

function failureTrace(status: ConnectorStatus | undefined): string | undefined {
  if (status === undefined) return undefined;
  if (status.connector.state === 'FAILED') return status.connector.trace ?? 'connector FAILED without a trace';
  return status.tasks.find((t) => t.state === 'FAILED')?.trace;
}

/** Waits until the connector and every task are RUNNING; a FAILED one ends the wait at once, with its trace. */
export async function waitUntilRunning(connect: ConnectApi, name: string, timeoutMs: number): Promise<ConnectorStatus> {
  const settled = await waitFor(
    async () => {
      const status = await connectorStatus(connect, name);
      return isRunning(status) || failureTrace(status) !== undefined ? status : undefined;
    },
    { timeoutMs, intervalMs: 250, description: `connector ${name} and its task to be RUNNING` },
  );
  const trace = failureTrace(settled);
  if (trace !== undefined) throw new ConnectorFailed(name, trace);
  return settled;
}

export class ConnectorFailed extends PipelineError {
  constructor(name: string, trace: string) {
    super('connector_failed', `connector ${name} FAILED:\n${trace.split('\n').slice(0, 40).join('\n')}`, {
      details: { name },
    });
  }
}

/**
 * Restarts the connector and only its failed tasks, and returns once Connect has taken the restart
 * (no task still FAILED with the old trace), so a wait that follows does not read the old failure.
 */
export async function restartFailed(connect: ConnectApi, name: string): Promise<void> {
  const before = failureTrace(await connectorStatus(connect, name));
  const response = await connectRequest(
    connect,
    `/connectors/${encodeURIComponent(name)}/restart?includeTasks=true&onlyFailed=true`,
    { method: 'POST' },
  );
  await expectOk(response, `restarting ${name}`);
  if (before === undefined) return;
  await waitFor(async () => failureTrace(await connectorStatus(connect, name)) !== before, {
    timeoutMs: 15_000,
    intervalMs: 100,
    description: `connector ${name} to take the restart`,
  }).catch(() => undefined); // failing again the same way: the next wait reports it
}

/**
 * Deletes the connector and returns once Connect no longer knows it. Connect answers the DELETE
 * when the removal is written to its config topic; the connector's status stays readable (RUNNING)
 * until its worker has stopped it, about 0.1 s later, so a caller that reads the status at once
 * would see a deleted connector still running.
 */
export async function deleteConnector(connect: ConnectApi, name: string): Promise<void> {
  const response = await connectRequest(connect, `/connectors/${encodeURIComponent(name)}`, { method: 'DELETE' });
  if (response.status !== 404) await expectOk(response, `deleting ${name}`);
  // Best effort: the deletion itself is done. A worker that died while stopping the connector may
  // leave its status behind until the cluster rebalances; the caller's next step says what it finds.
  await waitFor(async () => (await connectorStatus(connect, name)) === undefined, {
    timeoutMs: 30_000,
    intervalMs: 50,
    description: `Connect to stop the deleted connector ${name}`,
  }).catch(() => undefined);
}
