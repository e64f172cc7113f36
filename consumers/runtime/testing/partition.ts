/**
 * The two Kafka-facing ports of the runtime, recorded in memory: one partition's control (what
 * kafkajs's eachBatch gives the processing code: liveness, pause, heartbeat, commit) and the
 * producer that writes dead letters. No broker: a test reads what the runtime did from here.
 */
import type { IHeaders, Producer } from '../../../lib/kafka.js';
import type { PartitionControl } from '../context.js';

/** One partition's control, every call recorded. `deactivate()` is a revocation or a stop: the batch must be abandoned. */
export class RecordingPartitionControl implements PartitionControl {
  readonly topic: string;
  readonly partition: number;
  /** Offsets passed to a commit that succeeded, in order (each commits through that offset). */
  readonly commits: string[] = [];
  pauses = 0;
  resumes = 0;
  heartbeats = 0;
  #active = true;
  #paused = false;
  #resumed: (() => void)[] = [];

  constructor(topic: string, partition: number) {
    this.topic = topic;
    this.partition = partition;
  }

  /** The offset committed through last, undefined before the first commit. */
  get committedThrough(): string | undefined {
    return this.commits.at(-1);
  }

  get paused(): boolean {
    return this.#paused;
  }

  deactivate(): void {
    this.#active = false;
  }

  active(): boolean {
    return this.#active;
  }

  /** A property, not a method: the runtime hands it on unbound (kafkajs's pause is a closure too). */
  readonly pause = (): (() => void) => {
    this.pauses += 1;
    this.#paused = true;
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      this.resumes += 1;
      this.#paused = false;
      for (const wake of this.#resumed.splice(0)) wake();
    };
  };

  /** Resolves when the partition is not paused (at once when it is not). */
  whenResumed(): Promise<void> {
    if (!this.#paused) return Promise.resolve();
    return new Promise((resolve) => this.#resumed.push(resolve));
  }

  heartbeat(): Promise<boolean> {
    this.heartbeats += 1;
    return Promise.resolve(this.#active);
  }

  commitThrough(offset: string): Promise<boolean> {
    if (!this.#active) return Promise.resolve(false);
    this.commits.push(offset);
    return Promise.resolve(true);
  }
}

/** A message the dead-letter producer was given. */
export interface SentDeadLetter {
  topic: string;
  key: Buffer | string | null;
  value: Buffer | string | null;
  headers: IHeaders;
}

export interface RecordingProducer {
  producer: Producer;
  sent: SentDeadLetter[];
  /** While true, every send fails (Kafka refuses): the runtime holds the partition and sends again. */
  failing: boolean;
}

/**
 * A producer that keeps what it is sent. The runtime sends dead letters only (`send`); any other
 * use of the producer throws, so a runtime that starts using more of it fails here loudly rather
 * than quietly doing nothing.
 */
export function recordingProducer(): RecordingProducer {
  const recording: Omit<RecordingProducer, 'producer'> = { sent: [], failing: false };
  const send: Producer['send'] = (request) => {
    if (recording.failing) return Promise.reject(new Error('the test kit refuses dead letters (failing = true)'));
    for (const message of request.messages)
      recording.sent.push({
        topic: request.topic,
        key: message.key ?? null,
        value: message.value ?? null,
        headers: message.headers ?? {},
      });
    return Promise.resolve([]);
  };
  const target = { send };
  const producer = new Proxy(target, {
    get(object, property) {
      if (property === 'send') return object.send;
      if (property === 'then') return undefined; // not a thenable
      throw new Error(`the test kit's producer only sends dead letters; the runtime used producer.${String(property)}`);
    },
  }) as unknown as Producer;
  return Object.assign(recording, { producer });
}
