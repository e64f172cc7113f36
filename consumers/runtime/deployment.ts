/**
 * How a consumer runs in Kubernetes, beside the built-in three: deploy/kubernetes/programs.ts turns
 * each entry of consumers/team-consumers.ts into a Deployment (its settings table, probes on its
 * metrics port, scraped under the consumers job), its Kafka user and ACLs and its NetworkPolicy.
 * `npm run new-consumer` writes one into the consumer's module and adds it to that list.
 */
import type { SettingsDefinition, SettingsTable } from '../../lib/settings.js';

export interface ConsumerDeployment {
  /** The program, the Deployment, the group id and the Kafka user. */
  name: string;
  settings: SettingsDefinition<SettingsTable>;
  /** Instances in the cluster: each owns some partitions, so at most the partitions of its topics. */
  replicas: number;
  /** The topics it reads, under the cluster's topic prefix. */
  topics: (topicPrefix: string) => readonly string[];
}
