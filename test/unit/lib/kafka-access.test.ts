import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OUTBOX_CONNECTOR_FILE } from '../../../connectors/outbox-connector.js';
import { deadLetterTopicFor, topicFor } from '../../../events/catalogue.js';
import {
  DEBEZIUM_HEARTBEAT_TOPICS_PREFIX,
  KAFKA_OPERATIONS,
  type KafkaUserAccess,
  kafkaAccessAllows,
  kafkaAccessPlan,
  kafkaUserAccess,
} from '../../../lib/kafka-access.js';
import { STACK_CONNECT_CLUSTER } from '../../../stack/connect.js';
import { programConsumers, stackKafkaAccessInput, stackKafkaAccessPlan } from '../../../stack/kafka-users.js';

const plan = stackKafkaAccessPlan('stagefront');
const user = (name: string): KafkaUserAccess => kafkaUserAccess(plan, name);
const seat = topicFor('stagefront', 'seat');
const order = topicFor('stagefront', 'order');
const configs = `${STACK_CONNECT_CLUSTER.storageTopicPrefix}-configs`;

describe('the Kafka access plan', () => {
  it('has a user per consumer program, redrive, the connector command, Connect and one super user', () => {
    expect(plan.map((u) => u.user)).toEqual([
      'admin',
      'seat-availability',
      'confirmation-email',
      'sales-ledger',
      'redrive',
      'connector-command',
      'connect',
    ]);
    expect(plan.filter((u) => u.superUser).map((u) => u.user)).toEqual(['admin']);
    expect(user('admin').acls).toEqual([]);
  });

  it('lets a consumer read its topic and group and create and write its dead letter topic, and nothing more', () => {
    const sa = user('seat-availability');
    expect(kafkaAccessAllows(sa, 'topic', seat, 'Read')).toBe(true);
    expect(kafkaAccessAllows(sa, 'group', 'seat-availability', 'Read')).toBe(true);
    for (const op of ['Create', 'Write', 'Describe'] as const)
      expect(kafkaAccessAllows(sa, 'topic', deadLetterTopicFor(seat), op)).toBe(true);
    expect(kafkaAccessAllows(sa, 'topic', seat, 'Write')).toBe(false);
    expect(kafkaAccessAllows(sa, 'topic', order, 'Read')).toBe(false);
    expect(kafkaAccessAllows(sa, 'topic', deadLetterTopicFor(seat), 'Read')).toBe(false);
    expect(kafkaAccessAllows(sa, 'group', 'sales-ledger', 'Read')).toBe(false);
    expect(kafkaAccessAllows(sa, 'topic', seat, 'Delete')).toBe(false);
    expect(kafkaAccessAllows(sa, 'topic', configs, 'Read')).toBe(false);
    expect(kafkaAccessAllows(sa, 'cluster', undefined, 'Alter')).toBe(false);
    const email = user('confirmation-email');
    expect(kafkaAccessAllows(email, 'topic', order, 'Read')).toBe(true);
    expect(kafkaAccessAllows(email, 'topic', seat, 'Read')).toBe(false);
    expect(kafkaAccessAllows(email, 'topic', deadLetterTopicFor(order), 'Write')).toBe(true);
  });

  it("takes each consumer's topics from its definition and its group from its settings", () => {
    expect(programConsumers('p')).toEqual([
      { name: 'seat-availability', groupId: 'seat-availability', topics: ['p.seat'] },
      { name: 'confirmation-email', groupId: 'confirmation-email', topics: ['p.order'] },
      { name: 'sales-ledger', groupId: 'sales-ledger', topics: ['p.order'] },
    ]);
    expect(
      stackKafkaAccessInput('p')
        .aggregates.map((a) => topicFor('p', a))
        .sort(),
    ).toEqual(['p.order', 'p.seat']);
  });

  it('lets redrive read the dead letter topics with its throwaway groups and write the source topics only', () => {
    const r = user('redrive');
    for (const topic of [seat, order]) {
      expect(kafkaAccessAllows(r, 'topic', deadLetterTopicFor(topic), 'Read')).toBe(true);
      expect(kafkaAccessAllows(r, 'topic', topic, 'Write')).toBe(true);
      expect(kafkaAccessAllows(r, 'topic', topic, 'Read')).toBe(false);
      expect(kafkaAccessAllows(r, 'topic', deadLetterTopicFor(topic), 'Write')).toBe(false);
      expect(kafkaAccessAllows(r, 'group', `read-${deadLetterTopicFor(topic)}-0a1b`, 'Delete')).toBe(true);
    }
    expect(kafkaAccessAllows(r, 'group', 'seat-availability', 'Read')).toBe(false);
  });

  it('lets the connector command create the event topics and Connect write them; Connect alone owns its storage topics', () => {
    const cc = user('connector-command');
    expect(kafkaAccessAllows(cc, 'topic', seat, 'Create')).toBe(true);
    expect(kafkaAccessAllows(cc, 'topic', seat, 'Write')).toBe(false);
    const connect = user('connect');
    for (const suffix of ['configs', 'offsets', 'status']) {
      const topic = `${STACK_CONNECT_CLUSTER.storageTopicPrefix}-${suffix}`;
      for (const op of ['Create', 'Read', 'Write', 'DescribeConfigs'] as const)
        expect(kafkaAccessAllows(connect, 'topic', topic, op)).toBe(true);
      expect(plan.filter((u) => kafkaAccessAllows(u, 'topic', topic, 'Read')).map((u) => u.user)).toEqual([
        'admin',
        'connect',
      ]);
    }
    expect(kafkaAccessAllows(connect, 'group', STACK_CONNECT_CLUSTER.groupId, 'Read')).toBe(true);
    expect(kafkaAccessAllows(connect, 'topic', seat, 'Write')).toBe(true);
    expect(kafkaAccessAllows(connect, 'topic', seat, 'Read')).toBe(false);
    expect(kafkaAccessAllows(connect, 'topic', `${DEBEZIUM_HEARTBEAT_TOPICS_PREFIX}.stagefront`, 'Create')).toBe(true);
    expect(kafkaAccessAllows(connect, 'topic', seat, 'Delete')).toBe(false);
  });

  it('gives no program a topic deletion, a config change or a cluster operation beyond reading broker defaults', () => {
    for (const u of plan.filter((p) => !p.superUser)) {
      for (const acl of u.acls) {
        const risky = acl.operations.filter(
          (o) =>
            o === 'Delete' || o === 'Alter' || o === 'AlterConfigs' || o === 'ClusterAction' || o === 'IdempotentWrite',
        );
        // The one deletion: redrive's own throwaway reader groups.
        const readerGroups =
          u.user === 'redrive' &&
          acl.resource.type === 'group' &&
          acl.resource.patternType === 'prefix' &&
          acl.resource.name?.startsWith('read-') === true;
        expect(risky).toEqual(readerGroups ? ['Delete'] : []);
        if (acl.resource.type === 'cluster') expect(acl.operations).toEqual(['DescribeConfigs']);
        for (const o of acl.operations) expect(KAFKA_OPERATIONS).toContain(o);
      }
    }
  });

  it("follows the connector file: Debezium's heartbeat topic keeps its default prefix", () => {
    const config = JSON.parse(readFileSync(OUTBOX_CONNECTOR_FILE, 'utf8')) as Record<string, string>;
    expect(config['heartbeat.topics.prefix']).toBeUndefined();
    expect(config['heartbeat.interval.ms']).toBeDefined();
  });

  it('refuses two users of one name', () => {
    expect(() =>
      kafkaAccessPlan({
        ...stackKafkaAccessInput('p'),
        consumers: [{ name: 'connect', groupId: 'g', topics: ['p.seat'] }],
      }),
    ).toThrow(/Kafka user "connect" is named twice/);
  });
});
