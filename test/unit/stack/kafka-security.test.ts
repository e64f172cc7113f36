import { describe, expect, it } from 'vitest';
import { stackLayout } from '../../../stack/config.js';
import { workerProperties } from '../../../stack/connect.js';
import { serverProperties } from '../../../stack/kafka.js';
import {
  aclBindings,
  javaClientProperties,
  localKafkaClientEnv,
  scramFormatArguments,
} from '../../../stack/kafka-security.js';
import { LOCAL_KAFKA_PASSWORDS, stackKafkaAccessPlan } from '../../../stack/kafka-users.js';

const plaintext = stackLayout({ STACK_HOME: '/tmp/stack-plain' });
const secured = stackLayout({ STACK_HOME: '/tmp/stack-secured', STACK_KAFKA_SECURITY: 'sasl_ssl' });
const props = (text: string) =>
  Object.fromEntries(
    text
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

describe('STACK_KAFKA_SECURITY', () => {
  it('leaves the plaintext stack as it was: no TLS, no SASL, no authorizer, no client settings', () => {
    const server = props(serverProperties(plaintext));
    expect(server['listener.security.protocol.map']).toBe('PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT');
    expect(
      Object.keys(server).filter(
        (k) => k.startsWith('ssl.') || k.startsWith('sasl.') || k.includes('authorizer') || k === 'super.users',
      ),
    ).toEqual([]);
    expect(workerProperties(plaintext)).not.toMatch(/security\.protocol|sasl|ssl\./);
    expect(localKafkaClientEnv(plaintext, 'seat-availability')).toEqual({});
  });

  it('makes the broker listener SASL_SSL with SCRAM-SHA-512, the controller listener mutual TLS, and refuses what no ACL allows', () => {
    const server = props(serverProperties(secured));
    expect(server.listeners).toBe('SASL_SSL://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093');
    expect(server['advertised.listeners']).toBe('SASL_SSL://127.0.0.1:19092');
    expect(server['listener.security.protocol.map']).toBe('SASL_SSL:SASL_SSL,CONTROLLER:SSL');
    expect(server['sasl.enabled.mechanisms']).toBe('SCRAM-SHA-512');
    expect(server['listener.name.controller.ssl.client.auth']).toBe('required');
    expect(server['authorizer.class.name']).toBe('org.apache.kafka.metadata.authorizer.StandardAuthorizer');
    expect(server['allow.everyone.if.no.acl.found']).toBe('false');
    expect(server['super.users']).toBe('User:admin;User:CN=stagefront-kafka-node');
    expect(server['ssl.truststore.location']).toBe('/tmp/stack-secured/kafka-tls/ca.pem');
  });

  it('gives Connect the connect user for the worker and its producers, consumers and admin clients', () => {
    const worker = props(workerProperties(secured));
    for (const prefix of ['', 'producer.', 'consumer.', 'admin.']) {
      expect(worker[`${prefix}security.protocol`]).toBe('SASL_SSL');
      expect(worker[`${prefix}sasl.mechanism`]).toBe('SCRAM-SHA-512');
      expect(worker[`${prefix}sasl.jaas.config`]).toContain('username="connect"');
      expect(worker[`${prefix}ssl.truststore.type`]).toBe('PEM');
    }
    expect(javaClientProperties(plaintext, 'connect')).toEqual([]);
  });

  it('hands each program its own user and password', () => {
    expect(localKafkaClientEnv(secured, 'redrive')).toEqual({
      KAFKA_SECURITY_PROTOCOL: 'sasl_ssl',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'redrive',
      KAFKA_SASL_PASSWORD: LOCAL_KAFKA_PASSWORDS.redrive,
      KAFKA_TLS_CA_FILE: '/tmp/stack-secured/kafka-tls/ca.pem',
    });
    expect(() => localKafkaClientEnv(secured, 'nobody')).toThrow(
      /no local password for Kafka user "nobody": add it to LOCAL_KAFKA_PASSWORDS/,
    );
  });

  it('has a password for every user of the plan and none more, and makes each a SCRAM user at format time', () => {
    const users = stackKafkaAccessPlan().map((u) => u.user);
    expect(Object.keys(LOCAL_KAFKA_PASSWORDS).sort()).toEqual([...users].sort());
    const scram = scramFormatArguments();
    expect(scram.filter((a) => a === '--add-scram')).toHaveLength(users.length);
    for (const user of users)
      expect(scram).toContain(`SCRAM-SHA-512=[name=${user},password=${LOCAL_KAFKA_PASSWORDS[user]}]`);
  });

  it("turns the plan into one allow binding per user, resource and operation, in Kafka's codes", () => {
    const plan = stackKafkaAccessPlan();
    const bindings = aclBindings(plan);
    expect(bindings).toHaveLength(plan.reduce((n, u) => n + u.acls.reduce((m, a) => m + a.operations.length, 0), 0));
    expect(bindings).toContainEqual({
      resourceType: 2,
      resourceName: 'stagefront.seat',
      resourcePatternType: 3,
      principal: 'User:seat-availability',
      host: '*',
      operation: 3,
      permissionType: 3,
    });
    expect(bindings).toContainEqual({
      resourceType: 2,
      resourceName: '_connect-',
      resourcePatternType: 4,
      principal: 'User:connect',
      host: '*',
      operation: 5,
      permissionType: 3,
    });
    expect(bindings).toContainEqual({
      resourceType: 4,
      resourceName: 'kafka-cluster',
      resourcePatternType: 3,
      principal: 'User:seat-availability',
      host: '*',
      operation: 10,
      permissionType: 3,
    });
    expect(bindings.every((b) => b.principal !== 'User:admin')).toBe(true);
  });
});
