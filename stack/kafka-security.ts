/**
 * The native stack's Kafka with STACK_KAFKA_SECURITY=sasl_ssl: a local certificate authority and
 * a node certificate, a SASL_SSL listener with SCRAM-SHA-512 users from the access plan
 * (stack/kafka-users.ts), the standard authorizer refusing whatever no ACL allows, and the client
 * side of it for Connect's worker, the stack's own checks and the programs' environment.
 *
 * The controller listener (KRaft's quorum and the brokers' registrations) is TLS with client
 * certificates required: only a holder of the node key (owner-only, in the stack home) gets in,
 * as the node's certificate principal, a super user. It stays off SCRAM because KRaft controllers
 * cannot read SCRAM credentials, which live in the very metadata they serve.
 *
 * Every file here holds a key or a password: owner-only (0600) in an owner-only folder (0700).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Admin } from '../lib/kafka.js';
import type { KafkaAcl, KafkaOperation, KafkaResourceType, KafkaUserAccess } from '../lib/kafka-access.js';
import { KAFKA_ADMIN_USER } from '../lib/kafka-access.js';
import type { StackLayout } from './config.js';
import { writePrivateFile } from './private-dir.js';
import { runCommand } from './processes.js';
import { localKafkaPassword, stackKafkaAccessPlan } from './kafka-users.js';

/** The listener name and SCRAM mechanism of a secured stack. */
const SECURED_LISTENER = 'SASL_SSL';
const SCRAM_MECHANISM = 'SCRAM-SHA-512';

/** Subject of the node certificate: its principal on the controller listener (`User:CN=...`), a super user. */
const NODE_CERTIFICATE_SUBJECT = 'CN=stagefront-kafka-node';

export interface KafkaTlsFiles {
  dir: string;
  /** The CA's certificate (PEM): clients' trust. */
  caFile: string;
  caKeyFile: string;
  /** The node's PKCS#8 key followed by its certificate (PEM): the brokers' and controllers' key store. */
  nodeKeyStoreFile: string;
}

export function kafkaTlsFiles(layout: StackLayout): KafkaTlsFiles {
  const dir = join(layout.home, 'kafka-tls');
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    caKeyFile: join(dir, 'ca.key'),
    nodeKeyStoreFile: join(dir, 'node-keystore.pem'),
  };
}

export function kafkaSecured(layout: StackLayout): boolean {
  return layout.settings.kafkaSecurity === 'sasl_ssl';
}

function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/**
 * The CA and the node certificate (SAN IP 127.0.0.1 and localhost, for serving and for the
 * controller listener's client side), made once with openssl; kept while both files exist.
 */
export function ensureKafkaTls(layout: StackLayout): KafkaTlsFiles {
  const files = kafkaTlsFiles(layout);
  privateDir(files.dir);
  if (existsSync(files.caFile) && existsSync(files.nodeKeyStoreFile)) return files;
  const nodeKey = join(files.dir, 'node.key');
  const nodeCsr = join(files.dir, 'node.csr');
  const nodeCert = join(files.dir, 'node.pem');
  const extensions = join(files.dir, 'node.ext');
  const openssl = (args: string[]) => runCommand('openssl', args, { cwd: files.dir });
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    files.caKeyFile,
    '-out',
    files.caFile,
    '-days',
    '3650',
    '-subj',
    '/CN=Stagefront local Kafka CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  openssl([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    nodeKey,
    '-out',
    nodeCsr,
    '-subj',
    `/${NODE_CERTIFICATE_SUBJECT}`,
  ]);
  writePrivateFile(
    extensions,
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n',
  );
  openssl([
    'x509',
    '-req',
    '-in',
    nodeCsr,
    '-CA',
    files.caFile,
    '-CAkey',
    files.caKeyFile,
    '-CAcreateserial',
    '-out',
    nodeCert,
    '-days',
    '825',
    '-extfile',
    extensions,
  ]);
  writePrivateFile(files.nodeKeyStoreFile, `${readFileSync(nodeKey, 'utf8')}${readFileSync(nodeCert, 'utf8')}`);
  for (const file of [files.caKeyFile, files.caFile, nodeKey, nodeCert]) chmodSync(file, 0o600);
  for (const file of [nodeCsr, extensions, join(files.dir, 'ca.srl')]) rmSync(file, { force: true });
  return files;
}

function jaasConfig(user: string): string {
  return `org.apache.kafka.common.security.scram.ScramLoginModule required username="${user}" password="${localKafkaPassword(user)}";`;
}

/** The server.properties lines of a secured node that replace the plaintext listener lines. */
export function securedServerProperties(layout: StackLayout, port: number, controllerPort: number): string[] {
  const tls = kafkaTlsFiles(layout);
  const listener = SECURED_LISTENER.toLowerCase();
  return [
    `listeners=${SECURED_LISTENER}://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=${SECURED_LISTENER}://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    `inter.broker.listener.name=${SECURED_LISTENER}`,
    `listener.security.protocol.map=${SECURED_LISTENER}:SASL_SSL,CONTROLLER:SSL`,
    `sasl.enabled.mechanisms=${SCRAM_MECHANISM}`,
    `sasl.mechanism.inter.broker.protocol=${SCRAM_MECHANISM}`,
    // The brokers speak to each other as the admin user.
    `listener.name.${listener}.${SCRAM_MECHANISM.toLowerCase()}.sasl.jaas.config=${jaasConfig(KAFKA_ADMIN_USER)}`,
    'ssl.keystore.type=PEM',
    `ssl.keystore.location=${tls.nodeKeyStoreFile}`,
    'ssl.truststore.type=PEM',
    `ssl.truststore.location=${tls.caFile}`,
    'listener.name.controller.ssl.client.auth=required',
    'authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'allow.everyone.if.no.acl.found=false',
    `super.users=User:${KAFKA_ADMIN_USER};User:${NODE_CERTIFICATE_SUBJECT}`,
  ];
}

/**
 * Arguments of the storage format that create every plan user's SCRAM credentials (KRaft keeps
 * them in its metadata; kafkajs cannot create them). They hold the passwords: the caller passes
 * them through an owner-only argument file (`java @file`), never on a command line.
 */
export function scramFormatArguments(): string[] {
  return stackKafkaAccessPlan().flatMap((u) => [
    '--add-scram',
    `${SCRAM_MECHANISM}=[name=${u.user},password=${localKafkaPassword(u.user)}]`,
  ]);
}

/** A file beside the data directory that says how its storage was formatted. */
export function formatMarker(dataDir: string): string {
  return join(dataDir, 'stagefront-security');
}

/** The formatted data says plaintext but the setting sasl_ssl (or the reverse): stop with the fix. */
export function checkFormattedSecurity(layout: StackLayout, dataDir: string): void {
  if (!existsSync(join(dataDir, 'meta.properties'))) return;
  const formatted = existsSync(formatMarker(dataDir))
    ? readFileSync(formatMarker(dataDir), 'utf8').trim()
    : 'plaintext';
  const wanted = layout.settings.kafkaSecurity;
  if (formatted !== wanted) {
    throw new Error(
      `STACK_KAFKA_SECURITY is ${wanted} but the Kafka data in ${dataDir} was formatted for ${formatted} (its SCRAM users are made at format time): set STACK_KAFKA_SECURITY=${formatted}, or use another STACK_HOME for a ${wanted} stack.`,
    );
  }
}

/** Java client properties of `user` (Connect's worker, Kafka's tools), each also under `prefixes`. */
export function javaClientProperties(layout: StackLayout, user: string, prefixes: readonly string[] = []): string[] {
  if (!kafkaSecured(layout)) return [];
  const base = [
    `security.protocol=${SECURED_LISTENER}`,
    `sasl.mechanism=${SCRAM_MECHANISM}`,
    `sasl.jaas.config=${jaasConfig(user)}`,
    'ssl.truststore.type=PEM',
    `ssl.truststore.location=${kafkaTlsFiles(layout).caFile}`,
  ];
  return [...base, ...prefixes.flatMap((prefix) => base.map((line) => `${prefix}${line}`))];
}

/** The KAFKA_SECURITY_* environment (lib/kafka-security.ts) a program of the stack runs with as `user`; empty on a plaintext stack. */
export function localKafkaClientEnv(layout: StackLayout, user: string): Record<string, string> {
  if (!kafkaSecured(layout)) return {};
  return {
    KAFKA_SECURITY_PROTOCOL: 'sasl_ssl',
    KAFKA_SASL_MECHANISM: 'scram-sha-512',
    KAFKA_SASL_USERNAME: user,
    KAFKA_SASL_PASSWORD: localKafkaPassword(user),
    KAFKA_TLS_CA_FILE: kafkaTlsFiles(layout).caFile,
  };
}

/** kafkajs's ssl and sasl options for `user`, for the stack's own clients (health, ACLs) and tests. */
export function stackKafkaClientOptions(layout: StackLayout, user = KAFKA_ADMIN_USER) {
  if (!kafkaSecured(layout)) return {};
  return {
    ssl: { ca: [readFileSync(kafkaTlsFiles(layout).caFile, 'utf8')] },
    sasl: { mechanism: 'scram-sha-512' as const, username: user, password: localKafkaPassword(user) },
  };
}

/** Kafka's protocol codes (kafkajs's enums are not among the exports Node's ESM loader sees). */
const RESOURCE_CODES: Record<KafkaResourceType, number> = { topic: 2, group: 3, cluster: 4, transactionalId: 5 };
const OPERATION_CODES: Record<KafkaOperation, number> = {
  Read: 3,
  Write: 4,
  Create: 5,
  Delete: 6,
  Alter: 7,
  Describe: 8,
  ClusterAction: 9,
  DescribeConfigs: 10,
  AlterConfigs: 11,
  IdempotentWrite: 12,
};
const PATTERN_CODES = { literal: 3, prefix: 4 } as const;
const ALLOW = 3;

export interface AclBinding {
  resourceType: number;
  resourceName: string;
  resourcePatternType: number;
  principal: string;
  host: string;
  operation: number;
  permissionType: number;
}

/** The plan as Kafka ACL bindings: one per user, resource and operation, from any host. */
export function aclBindings(plan: readonly KafkaUserAccess[]): AclBinding[] {
  return plan.flatMap((u) =>
    u.acls.flatMap((acl: KafkaAcl) =>
      acl.operations.map((operation) => ({
        resourceType: RESOURCE_CODES[acl.resource.type],
        resourceName: acl.resource.type === 'cluster' ? 'kafka-cluster' : (acl.resource.name ?? ''),
        resourcePatternType: PATTERN_CODES[acl.resource.patternType],
        principal: `User:${u.user}`,
        host: '*',
        operation: OPERATION_CODES[operation],
        permissionType: ALLOW,
      })),
    ),
  );
}

/** Creates the plan's ACLs; Kafka keeps one of each, so calling it again changes nothing. */
export async function applyAcls(admin: Admin, plan: readonly KafkaUserAccess[]): Promise<number> {
  const acl = aclBindings(plan);
  await admin.createAcls({ acl: acl as unknown as Parameters<Admin['createAcls']>[0]['acl'] });
  return acl.length;
}
