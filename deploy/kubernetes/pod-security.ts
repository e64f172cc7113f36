/**
 * How every pod of the manifests runs: as a non-root user, its root filesystem read-only (an
 * emptyDir for what must be written), no privilege escalation, no capabilities, the runtime's
 * default seccomp profile, and no service-account token where the pod does not talk to the
 * Kubernetes API. One place for the programs' Deployments and the Strimzi resources' templates,
 * so test/kubernetes/ can check every pod the manifests render against the same rules.
 */

/** The programs image's node user (deploy/kubernetes/Containerfile `USER 1000:1000`). */
export const PROGRAM_UID = 1000;
/** The Strimzi images' kafka user; its files belong to group 0, and Strimzi gives persistent volumes fsGroup 0. */
const STRIMZI_UID = 1001;

const SECCOMP = { seccompProfile: { type: 'RuntimeDefault' } } as const;

/** A container's own restrictions (the same for every container the manifests describe). */
export function containerSecurityContext() {
  return {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    capabilities: { drop: ['ALL'] },
    ...SECCOMP,
  };
}

/** A pod's: non-root user and group, the default seccomp profile (fsGroup where a volume must be writable by the user). */
export function podSecurityContext(uid: number, options: { gid?: number; fsGroup?: number } = {}) {
  return {
    runAsNonRoot: true,
    runAsUser: uid,
    ...(options.gid === undefined ? {} : { runAsGroup: options.gid }),
    ...(options.fsGroup === undefined ? {} : { fsGroup: options.fsGroup }),
    ...SECCOMP,
  };
}

/** Node and the programs' temporary files write under /tmp: an emptyDir, the root filesystem stays read-only. */
export const TMP_VOLUME = { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } } as const;
export const TMP_MOUNT = { name: 'tmp', mountPath: '/tmp' } as const;

/**
 * A Strimzi pod template: the pod's security context and each named container's. Strimzi mounts
 * an emptyDir at /tmp in every container it runs (its read-only-root-filesystem support) and sets
 * automountServiceAccountToken false on the Kafka and Connect pods itself; the entity operator
 * keeps its token, since it watches KafkaTopic and KafkaUser resources through the Kubernetes API.
 */
export function strimziTemplate<C extends string>(containers: readonly C[], options: { fsGroup?: number } = {}) {
  return {
    pod: { securityContext: podSecurityContext(STRIMZI_UID, { gid: 0, ...options }) },
    ...(Object.fromEntries(containers.map((c) => [c, { securityContext: containerSecurityContext() }])) as Record<
      C,
      { securityContext: ReturnType<typeof containerSecurityContext> }
    >),
  };
}
