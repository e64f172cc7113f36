import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PoisonError, TransientError, classifyFailure, failureCode } from '../../../consumers/runtime/failures.js';
import {
  ERROR_CODES,
  PipelineError,
  causeChain,
  isErrorCode,
  isPostgresDataError,
  isRetryableKafkaError,
  isRetryablePgError,
  sqlState,
} from '../../../lib/errors.js';
import { createSchemaRegistry, latestSchema } from '../../../lib/schema-registry.js';
import { OPERATIONS_DOC, renderErrorCodesBlock } from '../../../scripts/readme-settings.js';

/** The retryable question withTransaction asks: anything in the chain a retryable Postgres error. */
function retryableInChain(err: unknown): boolean {
  return causeChain(err).some((link) => isRetryablePgError(link) || isRetryableKafkaError(link));
}

/** Shaped like pg's DatabaseError: an Error with a SQLSTATE `code`. */
function pgError(code: string, message = `pg error ${code}`): Error {
  return Object.assign(new Error(message), { code, severity: 'ERROR' });
}

/** Shaped like a kafkajs error: name and `retriable`. */
function kafkaError(name: string, retriable: boolean): Error {
  return Object.assign(new Error(`${name} happened`), { name, retriable });
}

describe('PipelineError', () => {
  it('carries a code, the cause and details', () => {
    const cause = pgError('23505');
    const error = new PipelineError('migration_failed', 'could not apply a migration', {
      cause,
      details: { ce_id: 'e1' },
    });

    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('PipelineError');
    expect(error.code).toBe('migration_failed');
    expect(error.cause).toBe(cause);
    expect(error.details).toEqual({ ce_id: 'e1' });
    expect(new PipelineError('bad_argument', 'y').details).toEqual({});
  });
});

describe('isRetryablePgError', () => {
  it.each(['40001', '40P01', '57P01', '57P02', '57P03', '53300', '55P03', '08000', '08006', '08P01'])(
    'retries SQLSTATE %s',
    (code) => expect(isRetryablePgError(pgError(code))).toBe(true),
  );

  it.each(['23505', '42P01', '22P02', '42601', '57014', '40002'])('does not retry SQLSTATE %s', (code) => {
    expect(isRetryablePgError(pgError(code))).toBe(false);
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'])('retries the network error %s', (code) => {
    expect(isRetryablePgError(Object.assign(new Error(`connect ${code}`), { code }))).toBe(true);
  });

  it('retries node-postgres "Connection terminated" errors', () => {
    expect(isRetryablePgError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isRetryablePgError(new Error('Connection terminated due to connection timeout'))).toBe(true);
  });
});

describe('isRetryableKafkaError', () => {
  it('follows kafkajs `retriable`', () => {
    expect(isRetryableKafkaError(kafkaError('KafkaJSProtocolError', true))).toBe(true);
    expect(isRetryableKafkaError(kafkaError('KafkaJSProtocolError', false))).toBe(false);
  });

  it.each(['KafkaJSConnectionError', 'KafkaJSRequestTimeoutError', 'KafkaJSNumberOfRetriesExceeded'])(
    'treats %s as retryable even when not marked retriable',
    (name) => expect(isRetryableKafkaError(kafkaError(name, false))).toBe(true),
  );

  it('ignores errors that are not from kafkajs', () => {
    expect(isRetryableKafkaError(Object.assign(new Error('x'), { retriable: true }))).toBe(false);
  });
});

describe('the retryable question, over a cause chain', () => {
  it('is true for transient Postgres and Kafka errors and false for the rest', () => {
    expect(retryableInChain(pgError('40001'))).toBe(true);
    expect(retryableInChain(kafkaError('KafkaJSConnectionError', true))).toBe(true);
    expect(retryableInChain(pgError('23505'))).toBe(false);
    expect(retryableInChain(new Error('Avro decode failed'))).toBe(false);
  });

  it('walks cause chains', () => {
    const wrapped = new PipelineError('migration_failed', 'outer', {
      cause: new PipelineError('commit_outcome_unknown', 'middle', { cause: pgError('40P01') }),
    });
    expect(retryableInChain(wrapped)).toBe(true);
    expect(retryableInChain(new PipelineError('migration_failed', 'outer', { cause: pgError('23505') }))).toBe(false);
  });

  it("follows kafkajs' originalError and the members of an AggregateError", () => {
    const withOriginal = Object.assign(kafkaError('KafkaJSNonRetriableError', false), {
      originalError: kafkaError('KafkaJSProtocolError', true),
    });
    expect(retryableInChain(withOriginal)).toBe(true);

    const refused = Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' });
    expect(retryableInChain(new AggregateError([new Error('other'), refused], ''))).toBe(true);
  });

  it('survives cycles and values that are not errors', () => {
    const a: { message: string; cause?: unknown } = { message: 'a' };
    const b = { message: 'b', cause: a };
    a.cause = b;
    expect(retryableInChain(a)).toBe(false);
    expect(causeChain(a)).toEqual([a, b]);
    for (const value of [null, undefined, 'ECONNRESET', 42, {}]) expect(retryableInChain(value)).toBe(false);
  });
});

describe('ERROR_CODES, the closed set', () => {
  it.each(Object.entries(ERROR_CODES))('%s is snake_case and says what it means in one sentence', (code, entry) => {
    expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(entry.meaning).toMatch(/^[A-Z"'].*\.$/);
    expect(isErrorCode(code)).toBe(true);
  });

  it('knows only its own codes', () => {
    for (const value of ['schema_registry_unreachable', 'toString', 'hasOwnProperty', '', 42, undefined])
      expect(isErrorCode(value), String(value)).toBe(false);
  });

  it.each([
    ['deadline exceeded', 'deadline_exceeded'],
    ['not a cloudevent', 'not_a_cloudevent'],
    ['undecodable', 'undecodable'],
    ['unknown schema', 'unknown_schema'],
    ['invalid payload', 'invalid_payload'],
    ['data error', 'data_error'],
    ['crashed the consumer', 'crashed_the_consumer'],
  ] as const)('a PoisonError for "%s" carries the code %s, which does not clear by itself', (reason, code) => {
    const error = new PoisonError(reason, 'bad record');
    expect(error.code).toBe(code);
    expect(ERROR_CODES[error.code].transient).toBe(false);
  });

  it.each(['claim_open', 'provider_unavailable', 'schema_registry_unavailable', 'smtp_unavailable'] as const)(
    'a TransientError may carry %s, a code that clears by itself',
    (code) => expect(ERROR_CODES[new TransientError(code, 'away').code].transient).toBe(true),
  );

  it('names a registry that does not answer schema_registry_unavailable, as the consumers do (one condition, one name)', async () => {
    const nobody = createSchemaRegistry('http://127.0.0.1:1/apis/ccompat/v7');
    await expect(latestSchema(nobody, 'seat-value')).rejects.toMatchObject({ code: 'schema_registry_unavailable' });
  });

  it('is the table printed in docs/operations.md', () => {
    const markdown = readFileSync(OPERATIONS_DOC, 'utf8');
    expect(markdown).toBe(renderErrorCodesBlock(markdown));
    for (const code of Object.keys(ERROR_CODES)) expect(markdown).toContain(`| \`${code}\` |`);
  });
});

describe('sqlState: the one reading of a Postgres error code', () => {
  it.each([
    ['a Postgres error', pgError('40001'), '40001'],
    ['a Postgres error with a letter in its code', pgError('40P01'), '40P01'],
    [
      'a socket error of five capitals (no severity)',
      Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }),
      undefined,
    ],
    ['a code without severity', Object.assign(new Error('x'), { code: '23505' }), undefined],
    ['a lower-case code', Object.assign(new Error('x'), { code: 'abcde', severity: 'ERROR' }), undefined],
    ['a code of the wrong length', Object.assign(new Error('x'), { code: '2350', severity: 'ERROR' }), undefined],
    ['our own error', new PipelineError('slot_lost', 'lost'), undefined],
    ['a string', '40001', undefined],
    ['null', null, undefined],
  ])('%s → %s', (_what, err, expected) => expect(sqlState(err)).toBe(expected));

  it.each([
    ['22P02', true],
    ['22003', true],
    ['23505', true],
    ['23503', true],
    ['25006', false],
    ['42501', false],
    ['40001', false],
    ['57014', false],
    ['XX000', false],
  ])('SQLSTATE %s is a data error: %s', (code, expected) => {
    expect(isPostgresDataError(pgError(code))).toBe(expected);
  });
});

describe('the runtime classification, built on the table', () => {
  it.each([
    ['a unique violation', pgError('23505'), { kind: 'poison', reason: 'data error' }],
    [
      'a bad text representation, wrapped',
      new Error('outer', { cause: pgError('22P02') }),
      { kind: 'poison', reason: 'data error' },
    ],
    ['a read-only database', pgError('25006'), { kind: 'infrastructure', code: '25006' }],
    [
      'a permission denied, wrapped',
      new Error('outer', { cause: pgError('42501') }),
      { kind: 'infrastructure', code: '42501' },
    ],
    [
      'a refused connection',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      { kind: 'infrastructure', code: 'ECONNREFUSED' },
    ],
    [
      'a socket code of five capitals',
      Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }),
      { kind: 'infrastructure', code: 'EPIPE' },
    ],
    [
      'a registry outage',
      new TransientError('schema_registry_unavailable', 'down'),
      { kind: 'infrastructure', code: 'schema_registry_unavailable' },
    ],
    ["a handler's data error", new PoisonError('data error', 'bad address'), { kind: 'poison', reason: 'data error' }],
  ])('%s', (_what, err, expected) => expect(classifyFailure(err)).toMatchObject(expected));

  it('labels a failure by its SQLSTATE before any other code in the chain', () => {
    expect(failureCode(new TransientError('claim_open', 'outer', { cause: pgError('57014') }))).toBe('57014');
    expect(failureCode(new TransientError('claim_open', 'busy'))).toBe('claim_open');
  });
});
