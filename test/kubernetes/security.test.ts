/**
 * The security model of deploy/kubernetes/manifests/, read from the committed files (which
 * manifests.test.ts proves are a fresh rendering): Kafka only over TLS with SCRAM users whose
 * ACLs are exactly the access plan's (lib/kafka-access.ts, the native stack's too); every Kafka
 * client on its own user; NetworkPolicies that admit each client only where it is needed; and
 * every pod the manifests describe hardened the same way. Table-driven over what is rendered, so
 * a new Deployment, Job or Strimzi resource without these properties fails here.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CLUSTER, KAFKA_CLUSTER_CA, PROMETHEUS_PODS, TOOL_LABEL } from '../../deploy/kubernetes/cluster.js';
import { kubernetesKafkaAccessPlan } from '../../deploy/kubernetes/kafka-users.js';
import { MANIFESTS_DIR } from '../../deploy/kubernetes/manifests.js';
import { metricsPort, programs, tools } from '../../deploy/kubernetes/programs.js';
import { kubernetesConnectorConfig } from '../../deploy/kubernetes/connect.js';
import { KAFKA_CONNECT_USER } from '../../lib/kafka-access.js';
import { stackKafkaAccessPlan } from '../../stack/kafka-users.js';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: Record<string, unknown>;
}

type Labels = Record<string, string>;
interface Peer {
  podSelector?: { matchLabels?: Labels };
  namespaceSelector?: { matchLabels?: Labels };
  ipBlock?: unknown;
}
interface NetworkPolicySpec {
  podSelector: { matchLabels?: Labels };
  policyTypes: string[];
  ingress?: { from?: Peer[]; ports?: { protocol?: string; port: number }[] }[];
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef: { name: string; key: string; optional?: boolean } };
}
interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type: string };
}
interface ContainerSpec {
  name: string;
  env?: EnvVar[];
  securityContext?: SecurityContext;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface PodSpec {
  automountServiceAccountToken?: boolean;
  securityContext?: SecurityContext;
  containers: ContainerSpec[];
  initContainers?: ContainerSpec[];
  volumes?: {
    name: string;
    emptyDir?: object;
    secret?: { secretName: string; items?: { key: string; path: string }[] };
  }[];
}

const files = readdirSync(MANIFESTS_DIR).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
const manifests = files.flatMap((f) =>
  parseAllDocuments(readFileSync(join(MANIFESTS_DIR, f), 'utf8')).map((d) => d.toJS() as Manifest),
);
const all = (kind: string) => manifests.filter((m) => m.kind === kind);
function one(kind: string, name?: string): Manifest {
  const found = all(kind).filter((m) => name === undefined || m.metadata.name === name);
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0] as Manifest;
}

/** Whether a label selector (matchLabels) selects pods with these labels. */
function selects(selector: { matchLabels?: Labels } | undefined, labels: Labels): boolean {
  return Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

const PROGRAMS = programs();
const TOOLS = tools();
const kafkaCr = one('Kafka');
const kafkaSpec = kafkaCr.spec.kafka as {
  listeners: {
    name: string;
    port: number;
    tls: boolean;
    authentication?: { type: string };
    networkPolicyPeers?: Peer[];
  }[];
  authorization?: { type: string; superUsers?: string[] };
};
const connect = one('KafkaConnect');
const connectSpec = connect.spec as {
  bootstrapServers: string;
  tls?: { trustedCertificates: { secretName: string; certificate?: string; pattern?: string }[] };
  authentication?: { type: string; username: string; passwordSecret: { secretName: string; password: string } };
};
const kafkaUsers = new Map(all('KafkaUser').map((u) => [u.metadata.name, u]));

function podSpecOf(m: Manifest): PodSpec {
  return (m.spec as { template: { spec: PodSpec } }).template.spec;
}
function env(c: ContainerSpec): Map<string, EnvVar> {
  return new Map((c.env ?? []).map((e) => [e.name, e]));
}
const deploymentOf = (name: string) => one('Deployment', name);
const podLabels = (m: Manifest) => (m.spec as { template: { metadata: { labels: Labels } } }).template.metadata.labels;

describe('Kafka: one TLS listener, SCRAM users, ACLs', () => {
  it('every listener encrypts and authenticates with SCRAM-SHA-512; authorization is simple, with no super user', () => {
    expect(kafkaSpec.listeners.length).toBeGreaterThan(0);
    for (const listener of kafkaSpec.listeners) {
      expect(listener.tls, `listener ${listener.name}`).toBe(true);
      expect(listener.authentication?.type, `listener ${listener.name}`).toBe('scram-sha-512');
    }
    expect(kafkaSpec.authorization?.type).toBe('simple');
    expect(kafkaSpec.authorization?.superUsers ?? []).toEqual([]);
    expect(
      (kafkaCr.spec.entityOperator as Record<string, unknown>).userOperator,
      'the User Operator turns KafkaUsers into users',
    ).toBeDefined();
  });

  it('Connect reaches the TLS listener, trusts the cluster CA and authenticates as its own KafkaUser', () => {
    const [listener] = kafkaSpec.listeners;
    expect(connectSpec.bootstrapServers).toBe(`${kafkaCr.metadata.name}-kafka-bootstrap:${listener?.port}`);
    expect(connectSpec.tls?.trustedCertificates).toEqual([
      { secretName: `${kafkaCr.metadata.name}-cluster-ca-cert`, certificate: 'ca.crt' },
    ]);
    expect(connectSpec.authentication).toEqual({
      type: 'scram-sha-512',
      username: KAFKA_CONNECT_USER,
      passwordSecret: { secretName: KAFKA_CONNECT_USER, password: 'password' },
    });
    expect(kafkaUsers.has(KAFKA_CONNECT_USER)).toBe(true);
  });

  it("a KafkaUser per user of the access plan but its super users, each SCRAM with exactly the plan's ACLs", () => {
    const plan = kubernetesKafkaAccessPlan();
    const rendered = plan.filter((u) => !u.superUser);
    expect([...kafkaUsers.keys()].sort()).toEqual(rendered.map((u) => u.user).sort());
    for (const access of rendered) {
      const user = kafkaUsers.get(access.user) as Manifest;
      expect(user.metadata.labels?.['strimzi.io/cluster'], access.user).toBe(kafkaCr.metadata.name);
      const spec = user.spec as {
        authentication: { type: string };
        authorization: {
          type: string;
          acls: { type: string; resource: Record<string, string>; operations: string[] }[];
        };
      };
      expect(spec.authentication.type, access.user).toBe('scram-sha-512');
      expect(spec.authorization.type, access.user).toBe('simple');
      const expected = access.acls.map((acl) => ({
        type: 'allow',
        resource:
          acl.resource.type === 'cluster'
            ? { type: 'cluster' }
            : { type: acl.resource.type, name: acl.resource.name, patternType: acl.resource.patternType },
        operations: acl.operations,
      }));
      expect(spec.authorization.acls, access.user).toEqual(expected);
    }
  });

  it("the plan is the native stack's: the same users with the same ACLs", () => {
    const byUser = <T extends { user: string }>(plan: T[]) => [...plan].sort((a, b) => a.user.localeCompare(b.user));
    expect(byUser(kubernetesKafkaAccessPlan())).toEqual(
      byUser(stackKafkaAccessPlan(kubernetesConnectorConfig().topicPrefix)),
    );
  });

  it('every Deployment that talks to Kafka does so as its own KafkaUser, over TLS checked against the mounted cluster CA', () => {
    const [listener] = kafkaSpec.listeners;
    const clients = all('Deployment').filter((d) => podSpecOf(d).containers.some((c) => env(c).has('KAFKA_BROKERS')));
    expect(clients.map((d) => d.metadata.name).sort()).toEqual(
      PROGRAMS.filter((p) => p.reaches.includes('kafka'))
        .map((p) => p.name)
        .sort(),
    );
    const users = new Set<string>();
    for (const deployment of clients) {
      const name = deployment.metadata.name;
      const pod = podSpecOf(deployment);
      const [c] = pod.containers as [ContainerSpec];
      const vars = env(c);
      expect(vars.get('KAFKA_BROKERS')?.value, name).toBe(`${kafkaCr.metadata.name}-kafka-bootstrap:${listener?.port}`);
      expect(vars.get('KAFKA_SECURITY_PROTOCOL')?.value, name).toBe('sasl_ssl');
      expect(vars.get('KAFKA_SASL_MECHANISM')?.value, name).toBe('scram-sha-512');
      const user = vars.get('KAFKA_SASL_USERNAME')?.value as string;
      expect(user, `${name} runs as its own user`).toBe(name);
      expect(kafkaUsers.has(user), `${name}: no KafkaUser ${user}`).toBe(true);
      expect(users.has(user), `${user} is shared`).toBe(false);
      users.add(user);
      expect(vars.get('KAFKA_SASL_PASSWORD')?.valueFrom?.secretKeyRef, name).toEqual({ name: user, key: 'password' });
      const caFile = vars.get('KAFKA_TLS_CA_FILE')?.value as string;
      const mount = c.volumeMounts?.find((m) => caFile.startsWith(`${m.mountPath}/`));
      expect(mount?.readOnly, `${name}: ${caFile} is on no read-only mount`).toBe(true);
      const volume = pod.volumes?.find((v) => v.name === mount?.name);
      expect(volume?.secret?.secretName, name).toBe(`${kafkaCr.metadata.name}-cluster-ca-cert`);
      expect(volume?.secret?.items, name).toEqual([
        { key: 'ca.crt', path: caFile.slice((mount?.mountPath.length ?? 0) + 1) },
      ]);
    }
  });

  it("every KafkaUser is somebody's: a Deployment's, Connect's or a tool's", () => {
    const owners = [
      ...all('Deployment').flatMap((d) => podSpecOf(d).containers.map((c) => env(c).get('KAFKA_SASL_USERNAME')?.value)),
      connectSpec.authentication?.username,
      ...TOOLS.map((t) => t.kafkaUser),
    ].filter((u): u is string => u !== undefined);
    expect(kafkaUsers.size).toBeGreaterThan(0);
    for (const user of kafkaUsers.keys()) expect(owners, `KafkaUser ${user} is used by nobody`).toContain(user);
  });
});

describe('NetworkPolicies', () => {
  const policies = all('NetworkPolicy').map((p) => ({
    name: p.metadata.name,
    spec: p.spec as unknown as NetworkPolicySpec,
  }));
  /** The ingress rules that apply to pods with these labels. */
  const rulesFor = (labels: Labels) =>
    policies
      .filter((p) => p.spec.policyTypes.includes('Ingress') && selects(p.spec.podSelector, labels))
      .flatMap((p) => p.spec.ingress ?? []);
  const PROMETHEUS = { namespaceSelector: {}, podSelector: { matchLabels: PROMETHEUS_PODS } };
  const CONNECT_PODS = {
    'strimzi.io/cluster': connect.metadata.name,
    'strimzi.io/kind': 'KafkaConnect',
    'strimzi.io/name': `${connect.metadata.name}-connect`,
  };

  it('deny every ingress in the namespace by default', () => {
    const deny = policies.filter((p) => Object.keys(p.spec.podSelector.matchLabels ?? {}).length === 0);
    expect(deny).toHaveLength(1);
    expect(deny[0]?.spec.policyTypes).toEqual(['Ingress']);
    expect(deny[0]?.spec.ingress ?? []).toEqual([]);
  });

  it('no rule admits everyone: each names its sources (no empty from, no IP block) and its ports', () => {
    expect(policies.length).toBeGreaterThan(1);
    for (const { name, spec } of policies) {
      for (const rule of spec.ingress ?? []) {
        expect(rule.from?.length ?? 0, `${name} admits every source`).toBeGreaterThan(0);
        expect(rule.ports?.length ?? 0, `${name} admits every port`).toBeGreaterThan(0);
        for (const peer of rule.from ?? []) expect(peer.ipBlock, name).toBeUndefined();
      }
    }
    for (const peer of kafkaSpec.listeners.flatMap((l) => l.networkPolicyPeers ?? []))
      expect(peer.podSelector?.matchLabels, 'a Kafka peer selects all pods').not.toEqual({});
  });

  it("a program's pods take only Prometheus, on the metrics port", () => {
    for (const program of PROGRAMS) {
      expect(rulesFor(podLabels(deploymentOf(program.name))), program.name).toEqual([
        { from: [PROMETHEUS], ports: [{ protocol: 'TCP', port: metricsPort(program) }] },
      ]);
    }
  });

  it("Kafka's listener takes exactly its clients: the Deployments that talk to Kafka, Connect, and the tools with a Kafka user", () => {
    const peers = kafkaSpec.listeners.flatMap((l) => l.networkPolicyPeers ?? []);
    expect(peers.length).toBeGreaterThan(0);
    const admitted = (labels: Labels) =>
      peers.some((peer) => peer.namespaceSelector === undefined && selects(peer.podSelector, labels));
    for (const deployment of all('Deployment')) {
      const talksToKafka = podSpecOf(deployment).containers.some((c) => env(c).has('KAFKA_BROKERS'));
      expect(admitted(podLabels(deployment)), `${deployment.metadata.name} (talks to Kafka: ${talksToKafka})`).toBe(
        talksToKafka,
      );
    }
    expect(admitted(CONNECT_PODS), 'Connect').toBe(true);
    for (const tool of TOOLS)
      expect(admitted({ [TOOL_LABEL]: tool.name }), tool.name).toBe(tool.kafkaUser !== undefined);
    expect(admitted({ [TOOL_LABEL]: 'something-else' })).toBe(false);
  });

  it("Connect's REST API takes only the tools that drive it (the connector command, slot recovery), never a program", () => {
    const rules = rulesFor(CONNECT_PODS);
    expect(rules.flatMap((r) => r.ports ?? [])).toEqual([{ protocol: 'TCP', port: 8083 }]);
    const admitted = (labels: Labels) =>
      rules.some((r) => (r.from ?? []).some((peer) => selects(peer.podSelector, labels)));
    const drivers = TOOLS.filter((t) => Object.values(t.settings.settings).some((s) => s.env === 'CONNECT_URL')).map(
      (t) => t.name,
    );
    expect(drivers.sort()).toEqual(['connector', 'slot-recovery']);
    for (const tool of TOOLS)
      expect(admitted({ [TOOL_LABEL]: tool.name }), tool.name).toBe(drivers.includes(tool.name));
    for (const deployment of all('Deployment'))
      expect(admitted(podLabels(deployment)), deployment.metadata.name).toBe(false);
  });

  it("what a program or tool declares it reaches agrees with its settings (Kafka, the registry, Connect's REST API)", () => {
    const reads = (settings: (typeof PROGRAMS)[number]['settings'], variable: string) =>
      Object.values(settings.settings).some((s) => s.env === variable);
    for (const p of PROGRAMS) {
      expect(p.reaches.includes('kafka'), p.name).toBe(reads(p.settings, 'KAFKA_BROKERS'));
      expect(p.reaches.includes('registry'), p.name).toBe(reads(p.settings, 'SCHEMA_REGISTRY_URL'));
      expect(p.reaches.includes('connect-rest'), p.name).toBe(false);
    }
    for (const t of TOOLS) {
      if (t.reaches.includes('kafka')) expect(reads(t.settings, 'KAFKA_BROKERS'), t.name).toBe(true);
      expect(t.reaches.includes('kafka'), t.name).toBe(t.kafkaUser !== undefined);
      expect(t.reaches.includes('connect-rest'), t.name).toBe(reads(t.settings, 'CONNECT_URL'));
    }
  });

  it('the seat database takes Connect and exactly the programs and tools that declare it', () => {
    const rules = rulesFor({ 'app.kubernetes.io/name': 'seat-db' });
    expect(rules.flatMap((r) => r.ports ?? [])).toEqual([{ protocol: 'TCP', port: CLUSTER.seatDbPort }]);
    const admitted = (labels: Labels) =>
      rules.some((r) => (r.from ?? []).some((peer) => selects(peer.podSelector, labels)));
    expect(admitted(CONNECT_PODS)).toBe(true);
    for (const p of PROGRAMS)
      expect(admitted(podLabels(deploymentOf(p.name))), p.name).toBe(p.reaches.includes('seat-db'));
    for (const t of TOOLS) expect(admitted({ [TOOL_LABEL]: t.name }), t.name).toBe(t.reaches.includes('seat-db'));
  });
});

/** A pod as the manifests describe it: its own security context, its containers', its service-account token and its volumes. */
interface PodRow {
  what: string;
  pod: SecurityContext | undefined;
  containers: { name: string; securityContext: SecurityContext | undefined; mounts?: ContainerSpec['volumeMounts'] }[];
  /** undefined: Strimzi decides (it mounts none on Kafka and Connect pods; the entity operator needs one). */
  automountServiceAccountToken?: boolean;
  /** Kubernetes pod specs only: the emptyDir volumes (Strimzi adds its own /tmp emptyDir). */
  emptyDirs?: string[];
  strimzi: boolean;
}

/** Where each kind keeps its pods. A kind the manifests render that runs pods but is missing here fails the test. */
const POD_BEARING: Record<string, (m: Manifest) => PodRow[]> = {
  Deployment: (m) => [kubernetesPod(`Deployment ${m.metadata.name}`, podSpecOf(m))],
  StatefulSet: (m) => [kubernetesPod(`StatefulSet ${m.metadata.name}`, podSpecOf(m))],
  DaemonSet: (m) => [kubernetesPod(`DaemonSet ${m.metadata.name}`, podSpecOf(m))],
  Job: (m) => [kubernetesPod(`Job ${m.metadata.name}`, podSpecOf(m))],
  CronJob: (m) => [
    kubernetesPod(
      `CronJob ${m.metadata.name}`,
      (m.spec as { jobTemplate: { spec: { template: { spec: PodSpec } } } }).jobTemplate.spec.template.spec,
    ),
  ],
  KafkaNodePool: (m) => [
    strimziPod(`KafkaNodePool ${m.metadata.name}`, (m.spec as { template?: StrimziTemplate }).template, [
      'kafkaContainer',
      'initContainer',
    ]),
  ],
  Kafka: (m) => {
    const spec = m.spec as { kafka: { template?: StrimziTemplate }; entityOperator?: { template?: StrimziTemplate } };
    // The Kafka nodes' pods take their template from the node pools (above); one here would be overridden.
    expect(
      spec.kafka.template?.pod,
      'Kafka spec.kafka.template.pod: set pod security on the KafkaNodePool',
    ).toBeUndefined();
    return spec.entityOperator === undefined
      ? []
      : [
          strimziPod(`Kafka ${m.metadata.name} entity operator`, spec.entityOperator.template, [
            'topicOperatorContainer',
            'userOperatorContainer',
          ]),
        ];
  },
  KafkaConnect: (m) => [
    strimziPod(`KafkaConnect ${m.metadata.name}`, (m.spec as { template?: StrimziTemplate }).template, [
      'connectContainer',
      'initContainer',
    ]),
  ],
};
/** Kinds known to run no pods of their own. */
const POD_FREE = new Set([
  'Service',
  'ServiceMonitor',
  'PrometheusRule',
  'KafkaTopic',
  'KafkaUser',
  'KafkaConnector',
  'NetworkPolicy',
]);

type StrimziTemplate = Record<string, { securityContext?: SecurityContext } | undefined>;

function kubernetesPod(what: string, spec: PodSpec): PodRow {
  return {
    what,
    pod: spec.securityContext,
    containers: [...(spec.initContainers ?? []), ...spec.containers].map((c) => ({
      name: c.name,
      securityContext: c.securityContext,
      mounts: c.volumeMounts,
    })),
    automountServiceAccountToken: spec.automountServiceAccountToken ?? true,
    emptyDirs: (spec.volumes ?? []).filter((v) => v.emptyDir !== undefined).map((v) => v.name),
    strimzi: false,
  };
}

function strimziPod(what: string, template: StrimziTemplate | undefined, containers: string[]): PodRow {
  return {
    what,
    pod: template?.pod?.securityContext,
    containers: containers.map((name) => ({ name, securityContext: template?.[name]?.securityContext })),
    strimzi: true,
  };
}

const rows = manifests.flatMap((m) => {
  const extract = POD_BEARING[m.kind];
  if (extract !== undefined) return extract(m);
  if (!POD_FREE.has(m.kind))
    throw new Error(
      `${m.kind} ${m.metadata.name}: does it run pods? Add it to POD_BEARING (with where its pod template is) or POD_FREE`,
    );
  return [];
});

describe('every pod the manifests describe is hardened', () => {
  it('finds the pods: every Deployment, the Kafka nodes, the entity operator and Connect', () => {
    expect(rows.filter((r) => r.what.startsWith('Deployment ')).length).toBe(PROGRAMS.length);
    expect(rows.map((r) => r.what)).toEqual(
      expect.arrayContaining([
        `KafkaNodePool ${CLUSTER.nodePool}`,
        `Kafka ${CLUSTER.kafka} entity operator`,
        `KafkaConnect ${CLUSTER.connect}`,
      ]),
    );
  });

  it.each(rows.map((r) => [r.what, r] as const))(
    '%s: non-root, read-only root filesystem, no privilege escalation, no capabilities, RuntimeDefault seccomp, no token',
    (_what, row) => {
      expect(row.pod?.runAsNonRoot, 'pod runAsNonRoot').toBe(true);
      expect(row.pod?.runAsUser, 'pod runAsUser').toBeGreaterThan(0);
      expect(row.pod?.seccompProfile, 'pod seccompProfile').toEqual({ type: 'RuntimeDefault' });
      expect(row.containers.length).toBeGreaterThan(0);
      for (const c of row.containers) {
        const sc = c.securityContext;
        expect(sc?.allowPrivilegeEscalation, `${c.name} allowPrivilegeEscalation`).toBe(false);
        expect(sc?.readOnlyRootFilesystem, `${c.name} readOnlyRootFilesystem`).toBe(true);
        expect(sc?.capabilities?.drop, `${c.name} capabilities.drop`).toEqual(['ALL']);
        expect(sc?.capabilities?.add ?? [], `${c.name} capabilities.add`).toEqual([]);
        expect(sc?.runAsNonRoot ?? true, `${c.name} runAsNonRoot`).toBe(true);
        expect(sc?.runAsUser ?? 1, `${c.name} runAsUser`).toBeGreaterThan(0);
        expect(sc?.seccompProfile ?? { type: 'RuntimeDefault' }, `${c.name} seccompProfile`).toEqual({
          type: 'RuntimeDefault',
        });
        // Node writes under /tmp: an emptyDir there, since the root is read-only.
        if (!row.strimzi)
          expect(
            c.mounts?.find((m) => m.mountPath === '/tmp' && row.emptyDirs?.includes(m.name)),
            `${c.name}: no emptyDir at /tmp`,
          ).toBeDefined();
      }
      if (!row.strimzi) expect(row.automountServiceAccountToken, 'automountServiceAccountToken').toBe(false);
    },
  );

  it('the cluster CA certificate is the only Secret mounted into a program, read-only', () => {
    for (const program of PROGRAMS) {
      const pod = podSpecOf(deploymentOf(program.name));
      const secretVolumes = (pod.volumes ?? []).filter((v) => v.secret !== undefined);
      expect(
        secretVolumes.map((v) => v.secret?.secretName),
        program.name,
      ).toEqual(program.reaches.includes('kafka') ? [KAFKA_CLUSTER_CA.secretName] : []);
      for (const v of secretVolumes)
        for (const c of pod.containers)
          expect(c.volumeMounts?.find((m) => m.name === v.name)?.readOnly, program.name).toBe(true);
    }
  });
});
