import { describe, expect, it } from 'vitest';
import { type KafkaSecurityConfig, kafkaClientSecurity, kafkaSecurityProblems } from '../../../lib/kafka-security.js';
import { ConfigError, defineSettings, parseSettings } from '../../../lib/settings.js';
import { kafkaSecuritySettings } from '../../../lib/kafka-security.js';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const base: KafkaSecurityConfig = {
  kafkaSecurityProtocol: 'plaintext',
  kafkaSaslMechanism: 'scram-sha-512',
  kafkaSaslUsername: '',
  kafkaSaslPassword: '',
  kafkaTlsCaFile: '',
};
const files = (path: string): string => {
  if (path === '/ca.pem') return PEM;
  if (path === '/not-pem') return 'hello';
  throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
};

describe('Kafka client security from the KAFKA_SECURITY_* settings', () => {
  it('plaintext by default: no TLS, no SASL', () => {
    const config = parseSettings(defineSettings('t', kafkaSecuritySettings), {});
    expect(config).toEqual(base);
    expect(kafkaClientSecurity('t', config, files)).toEqual({});
  });

  it('ssl with a CA file checks the brokers against it; without one, against the system CAs', () => {
    expect(
      kafkaClientSecurity('t', { ...base, kafkaSecurityProtocol: 'ssl', kafkaTlsCaFile: '/ca.pem' }, files),
    ).toEqual({ ssl: { ca: [PEM] } });
    expect(kafkaClientSecurity('t', { ...base, kafkaSecurityProtocol: 'ssl' }, files)).toEqual({ ssl: {} });
  });

  it('sasl_ssl sends the user and password with the mechanism', () => {
    const config = {
      ...base,
      kafkaSecurityProtocol: 'sasl_ssl',
      kafkaSaslUsername: 'ledger',
      kafkaSaslPassword: 'pw',
      kafkaTlsCaFile: '/ca.pem',
    } as const;
    expect(kafkaClientSecurity('t', config, files)).toEqual({
      ssl: { ca: [PEM] },
      sasl: { mechanism: 'scram-sha-512', username: 'ledger', password: 'pw' },
    });
  });

  it.each([
    [
      { kafkaSecurityProtocol: 'sasl_ssl' },
      ['KAFKA_SASL_USERNAME is not set', 'KAFKA_SASL_PASSWORD (secret) is not set'],
    ],
    [{ kafkaSecurityProtocol: 'sasl_ssl', kafkaSaslUsername: 'u' }, ['KAFKA_SASL_PASSWORD (secret) is not set']],
    [{ kafkaSaslUsername: 'u' }, ['KAFKA_SECURITY_PROTOCOL is plaintext, which sends no credentials']],
    [
      { kafkaSecurityProtocol: 'ssl', kafkaSaslPassword: 'p' },
      ['KAFKA_SECURITY_PROTOCOL is ssl, which sends no credentials'],
    ],
    [{ kafkaTlsCaFile: '/ca.pem' }, ['KAFKA_TLS_CA_FILE is set but KAFKA_SECURITY_PROTOCOL is plaintext']],
  ] as const)('%j is refused, naming the setting and the fix', (overrides, expected) => {
    const problems = kafkaSecurityProblems({ ...base, ...overrides });
    expect(problems).toHaveLength(expected.length);
    expected.forEach((text, i) => expect(problems[i]).toContain(text));
  });

  it('a password never appears in a problem', () => {
    const problems = kafkaSecurityProblems({
      ...base,
      kafkaSecurityProtocol: 'ssl',
      kafkaSaslUsername: 'u',
      kafkaSaslPassword: 's3cr3t-value',
    });
    expect(problems.join(' ')).not.toContain('s3cr3t-value');
  });

  it('an unreadable or non-PEM CA file is a ConfigError naming KAFKA_TLS_CA_FILE', () => {
    expect(() =>
      kafkaClientSecurity('t', { ...base, kafkaSecurityProtocol: 'ssl', kafkaTlsCaFile: '/missing' }, files),
    ).toThrow(/KAFKA_TLS_CA_FILE="\/missing" cannot be read \(ENOENT\)/);
    expect(() =>
      kafkaClientSecurity('t', { ...base, kafkaSecurityProtocol: 'ssl', kafkaTlsCaFile: '/not-pem' }, files),
    ).toThrow(ConfigError);
  });
});
