/**
 * The consumers teams added with `npm run new-consumer`, which adds each here (an import and an
 * entry between the markers): Kubernetes runs every one as a Deployment (deploy/kubernetes/programs.ts),
 * with nothing edited by hand. A consumer written without the scaffold is added the same way.
 */
import type { ConsumerDeployment } from './runtime/deployment.js';
// new-consumer: imports

export const TEAM_CONSUMERS: readonly ConsumerDeployment[] = [
  // new-consumer: entries
];
