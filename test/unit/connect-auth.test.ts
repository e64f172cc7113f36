/**
 * Kafka Connect's REST API requires credentials: the pure parts. The header the client sends, the
 * error a 401 becomes (naming the settings, never their values), the settings, and the files and
 * properties the launcher gives every worker (the real workers' refusals: test/connectors/connect-rest-auth.test.ts).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  basicAuthorization,
  connectFetch,
  connectUnauthorized,
  connectorStatus,
} from '../../connectors/connect-client.js';
import { connectorSettings } from '../../connectors/settings.js';
import { PipelineError } from '../../lib/errors.js';
import { ConfigError, parseSettings } from '../../lib/settings.js';
import { slotRecoverySettings } from '../../monitors/slot-recovery/settings.js';
import { LOCAL_CONNECT_USER, localStackProgramEnv, stackLayout } from '../../stack/config.js';
import {
  REST_AUTH_EXTENSION_CLASS,
  REST_LOGIN_MODULE_CLASS,
  restJaasConfig,
  restUsersFile,
  workerProperties,
} from '../../stack/connect.js';

const SECRET = 'pa:ss wörd\\x';

/** A local HTTP server answering every request with `status`; it records the request headers. */
async function answering(
  status: number,
): Promise<{ url: string; seen: IncomingHttpHeaders[]; close: () => Promise<void> }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers);
    response
      .writeHead(status, { 'content-type': 'text/plain' })
      .end(status === 401 ? 'User cannot access the resource.' : '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('the Connect client signs in with basic authentication', () => {
  it('builds the RFC 7617 header from the user and password (UTF-8)', () => {
    const header = basicAuthorization('stagefront-connect', SECRET);
    expect(header.startsWith('Basic ')).toBe(true);
    expect(Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8')).toBe(`stagefront-connect:${SECRET}`);
  });

  it('sends the header on every call; a 401 is an error naming CONNECT_USERNAME and CONNECT_PASSWORD and the fix, without the credentials', async () => {
    const server = await answering(401);
    try {
      const api = { connectUrl: server.url, connectUsername: 'ops-user', connectPassword: SECRET };
      const error = await connectorStatus(api, 'seat-outbox').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(server.seen[0]?.authorization).toBe(basicAuthorization('ops-user', SECRET));
      expect(error).toBeInstanceOf(PipelineError);
      expect((error as PipelineError).code).toBe('connect_unauthorized');
      const message = (error as Error).message;
      expect(message).toContain(`Kafka Connect at ${server.url} refused the credentials (HTTP 401)`);
      expect(message).toContain('CONNECT_USERNAME and CONNECT_PASSWORD');
      expect(message).toContain('docs/operations.md');
      expect(JSON.stringify({ message, details: (error as PipelineError).details })).not.toMatch(/ops-user|pa:ss/);
    } finally {
      await server.close();
    }
  });

  it('without credentials (a Connect closed otherwise, as in Kubernetes) sends no header; one of the two alone is refused before any call', async () => {
    const server = await answering(200);
    try {
      await connectFetch({ connectUrl: server.url, connectUsername: '', connectPassword: '' }, '/connectors');
      expect(server.seen).toHaveLength(1);
      expect(server.seen[0]?.authorization).toBeUndefined();
      await expect(
        connectFetch({ connectUrl: server.url, connectUsername: 'ops-user', connectPassword: '' }, '/connectors'),
      ).rejects.toThrow(/CONNECT_USERNAME and CONNECT_PASSWORD go together/);
      await expect(
        connectFetch({ connectUrl: server.url, connectUsername: '', connectPassword: SECRET }, '/connectors'),
      ).rejects.toThrow(/set both/);
      expect(server.seen).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('a 401 from the first worker is the answer: the next worker is not asked with the same credentials', async () => {
    const [first, second] = [await answering(401), await answering(200)];
    try {
      const api = { connectUrl: `${first.url},${second.url}`, connectUsername: 'ops-user', connectPassword: SECRET };
      await expect(connectFetch(api, '/connectors')).rejects.toThrow(connectUnauthorized(first.url).message);
      expect(second.seen).toHaveLength(0);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('CONNECT_USERNAME and CONNECT_PASSWORD', () => {
  const base = {
    CONNECTOR_SEAT_DB_URL: 'postgres://x:y@127.0.0.1:1/z',
    SLOT_RECOVERY_SEAT_DB_URL: 'postgres://x:y@127.0.0.1:1/z',
    RECONCILE_CONSUMER_DB_URL: 'postgres://x:y@127.0.0.1:1/z',
  };
  const problems = (def: Parameters<typeof parseSettings>[0], env: Record<string, string>) => {
    try {
      parseSettings(def, env);
      return [];
    } catch (error) {
      return (error as ConfigError).problems;
    }
  };

  it('the connector command and slot recovery take both; the password is a secret, never shown; a colon in the user is refused', () => {
    for (const def of [connectorSettings, slotRecoverySettings]) {
      expect(def.settings.connectPassword.secret).toBe(true);
      expect(problems(def, { ...base, CONNECT_USERNAME: 'ops-user', CONNECT_PASSWORD: SECRET })).toEqual([]);
    }
    expect(
      problems(connectorSettings, { ...base, CONNECT_USERNAME: 'a:b', CONNECT_PASSWORD: SECRET }).join('\n'),
    ).toContain('CONNECT_USERNAME="a:b" is not valid: expected a user name without colons or spaces');
  });

  it("the local stack passes the local user, the one the launcher writes into the workers' users file", () => {
    const env = localStackProgramEnv(stackLayout({}));
    expect({ user: env.CONNECT_USERNAME, password: env.CONNECT_PASSWORD }).toEqual({
      user: LOCAL_CONNECT_USER.username,
      password: LOCAL_CONNECT_USER.password,
    });
    const config = parseSettings(connectorSettings, env);
    expect({ connectUsername: config.connectUsername, connectPassword: config.connectPassword }).toEqual({
      connectUsername: LOCAL_CONNECT_USER.username,
      connectPassword: LOCAL_CONNECT_USER.password,
    });
  });
});

describe("the workers' REST authentication", () => {
  it("every worker of the stack runs Kafka's basic-auth REST extension", () => {
    expect(workerProperties(stackLayout({}))).toContain(`\nrest.extension.classes=${REST_AUTH_EXTENSION_CLASS}\n`);
  });

  it('the JAAS file names the KafkaConnect realm, the property-file login module and the users file; a path JAAS cannot hold is refused', () => {
    expect(restJaasConfig('/home/x/.stack/connect/rest-users.properties')).toBe(
      `KafkaConnect {\n  ${REST_LOGIN_MODULE_CLASS} required\n  file="/home/x/.stack/connect/rest-users.properties";\n};\n`,
    );
    expect(() => restJaasConfig('/tmp/a"b')).toThrow(/quote, backslash or \$/);
  });

  it('the users file holds one properties line per user, escaped; no user or an empty password is refused (an empty file lets everyone in)', () => {
    expect(
      restUsersFile([
        { username: 'stagefront-connect', password: 'secret' },
        { username: 'ops', password: ' a\\b' },
      ]),
    ).toBe('stagefront-connect: secret\nops: \\ a\\\\b\n');
    expect(restUsersFile([{ username: 'a=b c', password: 'x' }])).toBe('a\\=b\\ c: x\n');
    expect(() => restUsersFile([])).toThrow(/an empty file lets every request in/);
    expect(() => restUsersFile([{ username: 'ops', password: '' }])).toThrow(/needs a user name and a password/);
  });
});
