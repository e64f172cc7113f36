/**
 * How a program authenticates to Kafka and checks the brokers: one settings fragment that every
 * program and tool speaking to Kafka spreads into its settings table, and the one function that
 * turns those settings into the client's `ssl` and `sasl` options (createKafka's `security`).
 *
 * plaintext is the local stack's default (loopback only); ssl encrypts and checks the brokers'
 * certificate; sasl_ssl adds SCRAM: each program has a user of its own, whose ACLs allow its job
 * and nothing else (lib/kafka-access.ts).
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { SASLOptions } from './kafka.js';
import { type Config, ConfigError, type SettingsTable, zEnum, zString } from './settings.js';

const KAFKA_SECURITY_PROTOCOLS = ['plaintext', 'ssl', 'sasl_ssl'] as const;
const KAFKA_SASL_MECHANISMS = ['scram-sha-512', 'scram-sha-256'] as const;

/** Spread into a program's settings table: `{ ...kafkaSecuritySettings, ... }`. */
export const kafkaSecuritySettings = {
  kafkaSecurityProtocol: {
    env: 'KAFKA_SECURITY_PROTOCOL',
    default: 'plaintext',
    parser: zEnum(KAFKA_SECURITY_PROTOCOLS),
    description:
      "How this program reaches the Kafka brokers: plaintext (the local stack, loopback only), ssl (TLS, the brokers' certificate checked against KAFKA_TLS_CA_FILE or the system's CAs) or sasl_ssl (TLS and a SCRAM user of its own, KAFKA_SASL_USERNAME).",
  },
  kafkaSaslMechanism: {
    env: 'KAFKA_SASL_MECHANISM',
    default: 'scram-sha-512',
    parser: zEnum(KAFKA_SASL_MECHANISMS),
    description:
      'The SCRAM mechanism of KAFKA_SASL_USERNAME, as its credentials were created on the brokers (only with sasl_ssl).',
  },
  kafkaSaslUsername: {
    env: 'KAFKA_SASL_USERNAME',
    default: '',
    parser: zString({ example: 'seat-availability' }),
    description: "This program's Kafka user (required with sasl_ssl): its ACLs allow its job only.",
  },
  kafkaSaslPassword: {
    env: 'KAFKA_SASL_PASSWORD',
    default: '',
    parser: zString({ example: 'a-long-random-password' }),
    description: 'The password of KAFKA_SASL_USERNAME (required with sasl_ssl).',
    secret: true,
  },
  kafkaTlsCaFile: {
    env: 'KAFKA_TLS_CA_FILE',
    default: '',
    parser: zString({ example: '/etc/stagefront/kafka-ca.pem' }),
    description:
      "PEM file of the certificate authority that signed the brokers' certificates (ssl and sasl_ssl); empty trusts the system's CAs.",
  },
} as const satisfies SettingsTable;

export type KafkaSecurityConfig = Config<typeof kafkaSecuritySettings>;

/** What createKafka passes to the client: TLS options and SCRAM credentials, or neither. */
export interface KafkaClientSecurity {
  ssl?: ConnectionOptions;
  sasl?: SASLOptions;
}

/** The problems of a security configuration, one sentence each naming the setting and the fix (pure: no file is read). */
export function kafkaSecurityProblems(config: KafkaSecurityConfig): string[] {
  const problems: string[] = [];
  const protocol = config.kafkaSecurityProtocol;
  if (protocol === 'sasl_ssl') {
    if (config.kafkaSaslUsername === '')
      problems.push(
        "KAFKA_SECURITY_PROTOCOL is sasl_ssl but KAFKA_SASL_USERNAME is not set: set it to this program's Kafka user.",
      );
    if (config.kafkaSaslPassword === '')
      problems.push(
        'KAFKA_SECURITY_PROTOCOL is sasl_ssl but KAFKA_SASL_PASSWORD (secret) is not set: set it to the password of KAFKA_SASL_USERNAME.',
      );
  } else if (config.kafkaSaslUsername !== '' || config.kafkaSaslPassword !== '') {
    problems.push(
      `KAFKA_SASL_USERNAME or KAFKA_SASL_PASSWORD is set but KAFKA_SECURITY_PROTOCOL is ${protocol}, which sends no credentials: set KAFKA_SECURITY_PROTOCOL=sasl_ssl, or unset them.`,
    );
  }
  if (protocol === 'plaintext' && config.kafkaTlsCaFile !== '') {
    problems.push(
      'KAFKA_TLS_CA_FILE is set but KAFKA_SECURITY_PROTOCOL is plaintext, which uses no TLS: set KAFKA_SECURITY_PROTOCOL to ssl or sasl_ssl, or unset KAFKA_TLS_CA_FILE.',
    );
  }
  return problems;
}

/**
 * The client options of a security configuration. A bad combination or an unreadable CA file
 * throws a ConfigError of `program` naming the setting and the fix; the password is never echoed.
 */
export function kafkaClientSecurity(
  program: string,
  config: KafkaSecurityConfig,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): KafkaClientSecurity {
  const problems = kafkaSecurityProblems(config);
  if (problems.length > 0) throw new ConfigError(program, problems);
  const protocol = config.kafkaSecurityProtocol;
  if (protocol === 'plaintext') return {};
  let ca: string | undefined;
  if (config.kafkaTlsCaFile !== '') {
    try {
      ca = readFile(config.kafkaTlsCaFile);
    } catch (error) {
      throw new ConfigError(program, [
        `KAFKA_TLS_CA_FILE=${JSON.stringify(config.kafkaTlsCaFile)} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): point it at the PEM file of the brokers' certificate authority.`,
      ]);
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) {
      throw new ConfigError(program, [
        `KAFKA_TLS_CA_FILE=${JSON.stringify(config.kafkaTlsCaFile)} holds no PEM certificate: point it at the PEM file of the brokers' certificate authority.`,
      ]);
    }
  }
  const ssl: ConnectionOptions = ca === undefined ? {} : { ca: [ca] };
  if (protocol === 'ssl') return { ssl };
  return {
    ssl,
    sasl: {
      mechanism: config.kafkaSaslMechanism,
      username: config.kafkaSaslUsername,
      password: config.kafkaSaslPassword,
    },
  };
}

/**
 * The KAFKA_SECURITY_* variables of a configuration, for a program that starts another (the
 * rehearsal its consumers, the bench its instances): the child reads the same settings.
 */
export function kafkaSecurityEnv(config: KafkaSecurityConfig): Record<string, string> {
  return Object.fromEntries(
    Object.entries(kafkaSecuritySettings).map(([key, setting]) => [
      setting.env,
      String(config[key as keyof KafkaSecurityConfig]),
    ]),
  );
}
