/**
 * Who may open a connection to what in the namespace. Every pod refuses all ingress by default;
 * each rule below lets one kind of client in, generated from what the programs and tools declare
 * they reach (programs.ts `reaches`), so a new program gets exactly its rules and nothing is
 * written twice. Kafka's listener is guarded by Strimzi, which turns the listener's
 * networkPolicyPeers (kafka.ts) into its own NetworkPolicy, and Strimzi's policies also let the
 * brokers, the operators and Connect's workers reach one another; those are not repeated here.
 */
import { CLUSTER, PART_OF, PLATFORM_PODS, PROMETHEUS_PODS, TOOL_LABEL } from './cluster.js';
import { metricsPort, programs, tools, type Program, type Reach } from './programs.js';

/** The ports the platform's services listen on (cluster.ts names them). */
const PLATFORM_PORTS: Record<keyof typeof PLATFORM_PODS, number> = {
  'seat-db': CLUSTER.seatDbPort,
  'consumer-db': CLUSTER.consumerDbPort,
  registry: Number(new URL(CLUSTER.registryUrl).port),
  alertmanager: Number(new URL(CLUSTER.alertmanagerUrl).port),
  smtp: CLUSTER.smtpPort,
};

/** Strimzi's labels on the KafkaConnect's worker pods. */
const CONNECT_PODS = { 'strimzi.io/cluster': CLUSTER.connect, 'strimzi.io/kind': 'KafkaConnect' } as const;
/** Connect's REST API port (Strimzi's, fixed). */
const CONNECT_REST_PORT = 8083;

type Labels = Readonly<Record<string, string>>;
interface Peer {
  podSelector: { matchLabels: Labels };
  namespaceSelector?: Record<string, never>;
}

/** A program's pods (the Deployment's selector). */
function programPods(program: Pick<Program, 'name'>): Labels {
  return { 'app.kubernetes.io/name': program.name, ...PART_OF };
}

const podsOf = (matchLabels: Labels): Peer => ({ podSelector: { matchLabels } });
const PROMETHEUS: Peer = { namespaceSelector: {}, podSelector: { matchLabels: PROMETHEUS_PODS } };

/** The pods allowed to reach `target`: the programs and tools that declare it, and Connect for the seat database. */
export function clientsOf(target: Reach): Peer[] {
  return [
    ...programs()
      .filter((p) => p.reaches.includes(target))
      .map((p) => podsOf(programPods(p))),
    ...tools()
      .filter((t) => t.reaches.includes(target))
      .map((t) => podsOf({ [TOOL_LABEL]: t.name })),
    ...(target === 'kafka' || target === 'seat-db' ? [podsOf(CONNECT_PODS)] : []),
  ];
}

interface IngressRule {
  /** Never empty: an empty `from` would admit every source. */
  from: Peer[];
  ports: { protocol: 'TCP'; port: number }[];
}

function policy(name: string, podSelector: Labels, ingress: IngressRule[]) {
  const open = ingress.filter((rule) => rule.from.length === 0);
  if (open.length > 0)
    throw new Error(`NetworkPolicy ${name}: a rule without sources would admit everyone; give it a source or drop it`);
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, labels: { ...PART_OF } },
    spec: {
      podSelector: Object.keys(podSelector).length === 0 ? {} : { matchLabels: podSelector },
      policyTypes: ['Ingress'],
      ingress,
    },
  };
}

const tcp = (port: number) => ({ protocol: 'TCP' as const, port });

/** Every pod of the namespace: no ingress unless a policy below allows it. */
function defaultDenyIngress() {
  return policy('stagefront-default-deny-ingress', {}, []);
}

/** A program's pods: Prometheus, from any namespace, on the metrics port, and nothing else. */
export function programIngress(program: Program) {
  return policy(`${program.name}-ingress`, programPods(program), [
    { from: [PROMETHEUS], ports: [tcp(metricsPort(program))] },
  ]);
}

/** Each platform service's pods in the namespace: the programs and tools that reach it, on its port (Prometheus too, for Alertmanager). */
function platformIngress() {
  return (Object.keys(PLATFORM_PODS) as (keyof typeof PLATFORM_PODS)[])
    .map((target) => ({ target, from: [...clientsOf(target), ...(target === 'alertmanager' ? [PROMETHEUS] : [])] }))
    .filter(({ from }) => from.length > 0)
    .map(({ target, from }) =>
      policy(`stagefront-${target}-ingress`, PLATFORM_PODS[target], [{ from, ports: [tcp(PLATFORM_PORTS[target])] }]),
    );
}

/** Connect's REST API from the tools that drive it; Strimzi's own policy adds the cluster operator and the workers themselves. */
function connectRestIngress() {
  return policy('stagefront-connect-rest-ingress', CONNECT_PODS, [
    { from: clientsOf('connect-rest'), ports: [tcp(CONNECT_REST_PORT)] },
  ]);
}

export function networkPolicies() {
  return [defaultDenyIngress(), connectRestIngress(), ...platformIngress()];
}
