/**
 * A Strimzi KafkaUser per user of the access plan (lib/kafka-access.ts), the same plan the native
 * stack creates its ACLs from: SCRAM-SHA-512 credentials the User Operator generates into a Secret
 * of the user's name (key `password`), and the plan's ACLs, one to one, as simple authorization.
 * The plan's inputs are the cluster's own: the consumers' Deployments (name, group, topics), the
 * connector command's topic prefix, the catalogue's aggregates and the worker's group and storage
 * topics (stack/connect.ts, which the KafkaConnect's spec also reads).
 */
import { type KafkaAcl, type KafkaAccessInput, type KafkaUserAccess, kafkaAccessPlan } from '../../lib/kafka-access.js';
import { STRIMZI_API_VERSION } from '../../connectors/outbox-connector.js';
import { STACK_CONNECT_CLUSTER } from '../../stack/connect.js';
import { catalogueAggregates } from '../../stack/kafka-users.js';
import { CLUSTER, PART_OF } from './cluster.js';
import { kubernetesConnectorConfig } from './connect.js';
import { kafkaUserOf, programConfig, programs } from './programs.js';

function kubernetesKafkaAccessInput(): KafkaAccessInput {
  return {
    topicPrefix: kubernetesConnectorConfig().topicPrefix,
    consumers: programs().flatMap((program) => {
      const user = kafkaUserOf(program);
      return user === undefined
        ? []
        : [{ name: user, groupId: programConfig(program).groupId as string, topics: program.topics }];
    }),
    connect: { groupId: STACK_CONNECT_CLUSTER.groupId, storageTopicPrefix: STACK_CONNECT_CLUSTER.storageTopicPrefix },
    aggregates: catalogueAggregates(),
  };
}

export function kubernetesKafkaAccessPlan(): KafkaUserAccess[] {
  return kafkaAccessPlan(kubernetesKafkaAccessInput());
}

/**
 * The plan's users that get a KafkaUser: all but its super users. The native stack's super user
 * administers ACLs and users; here the User and Topic Operators do that with their own
 * certificates, so the cluster has no super user at all.
 */
function renderedKafkaUsers(plan = kubernetesKafkaAccessPlan()): KafkaUserAccess[] {
  return plan.filter((user) => !user.superUser);
}

/** An ACL of the plan as a Strimzi AclRule (the cluster resource has no name and no pattern). */
function strimziAcl(acl: KafkaAcl) {
  const { type, name, patternType } = acl.resource;
  return {
    type: 'allow',
    resource: type === 'cluster' ? { type } : { type, name, patternType },
    operations: [...acl.operations],
  };
}

function kafkaUser(access: KafkaUserAccess) {
  return {
    apiVersion: STRIMZI_API_VERSION,
    kind: 'KafkaUser',
    metadata: {
      name: access.user,
      labels: { 'strimzi.io/cluster': CLUSTER.kafka, ...PART_OF },
      annotations: { 'stagefront.io/purpose': access.purpose },
    },
    spec: {
      authentication: { type: 'scram-sha-512' },
      authorization: { type: 'simple', acls: access.acls.map(strimziAcl) },
    },
  };
}

export function kafkaUsers() {
  return renderedKafkaUsers().map(kafkaUser);
}
