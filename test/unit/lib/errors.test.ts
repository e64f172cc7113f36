import { describe, expect, it } from 'vitest';
import {
  PipelineError,
  causeChain,
  isRetryableKafkaError,
  isRetryablePgError,
  isTransient,
} from '../../../lib/errors.js';

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
    const error = new PipelineError('inbox_write_failed', 'could not write the inbox row', {
      cause,
      details: { ce_id: 'e1' },
    });

    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('PipelineError');
    expect(error.code).toBe('inbox_write_failed');
    expect(error.cause).toBe(cause);
    expect(error.details).toEqual({ ce_id: 'e1' });
    expect(new PipelineError('x', 'y').details).toEqual({});
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

describe('isTransient', () => {
  it('is true for transient Postgres and Kafka errors and false for the rest', () => {
    expect(isTransient(pgError('40001'))).toBe(true);
    expect(isTransient(kafkaError('KafkaJSConnectionError', true))).toBe(true);
    expect(isTransient(pgError('23505'))).toBe(false);
    expect(isTransient(new Error('Avro decode failed'))).toBe(false);
  });

  it('walks cause chains', () => {
    const wrapped = new PipelineError('inbox_write_failed', 'outer', {
      cause: new PipelineError('effect_failed', 'middle', { cause: pgError('40P01') }),
    });
    expect(isTransient(wrapped)).toBe(true);
    expect(isTransient(new PipelineError('inbox_write_failed', 'outer', { cause: pgError('23505') }))).toBe(false);
  });

  it("follows kafkajs' originalError and the members of an AggregateError", () => {
    const withOriginal = Object.assign(kafkaError('KafkaJSNonRetriableError', false), {
      originalError: kafkaError('KafkaJSProtocolError', true),
    });
    expect(isTransient(withOriginal)).toBe(true);

    const refused = Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' });
    expect(isTransient(new AggregateError([new Error('other'), refused], ''))).toBe(true);
  });

  it('survives cycles and values that are not errors', () => {
    const a: { message: string; cause?: unknown } = { message: 'a' };
    const b = { message: 'b', cause: a };
    a.cause = b;
    expect(isTransient(a)).toBe(false);
    expect(causeChain(a)).toEqual([a, b]);
    for (const value of [null, undefined, 'ECONNRESET', 42, {}]) expect(isTransient(value)).toBe(false);
  });
});
