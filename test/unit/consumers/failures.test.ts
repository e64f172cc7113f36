/** The failure model (failures.ts): which thrown value is poison, a bug in the consumer, or the infrastructure's. */
import { AssertionError } from 'node:assert';
import { describe, expect, it } from 'vitest';
import { PipelineError } from '../../../lib/errors.js';
import { PoisonError, TransientError, classifyFailure } from '../../../consumers/runtime/failures.js';

/** An error as node-postgres builds it. */
function pgError(code: string): Error {
  return Object.assign(new Error(`pg ${code}`), { code, severity: 'ERROR' });
}

function systemError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, errno: -111, syscall: 'connect' });
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  throw new Error('did not throw');
}

const cases: { name: string; err: unknown; kind: string; code?: string; reason?: string }[] = [
  { name: 'a PoisonError', err: new PoisonError('invalid payload', 'bad'), kind: 'poison', reason: 'invalid payload' },
  { name: 'a Postgres data error (22012)', err: pgError('22012'), kind: 'poison', reason: 'data error' },
  { name: 'a Postgres constraint error (23505)', err: pgError('23505'), kind: 'poison', reason: 'data error' },
  {
    name: 'a handler TypeError (reading a field of undefined)',
    err: thrown(() => (undefined as unknown as { seat: { id: string } }).seat.id),
    kind: 'handler-bug',
    code: 'TypeError',
  },
  {
    name: 'a ReferenceError',
    err: new ReferenceError('seatId is not defined'),
    kind: 'handler-bug',
    code: 'ReferenceError',
  },
  { name: 'a RangeError', err: new RangeError('Invalid time value'), kind: 'handler-bug', code: 'RangeError' },
  { name: 'a SyntaxError (JSON.parse)', err: thrown(() => JSON.parse('{')), kind: 'handler-bug', code: 'SyntaxError' },
  {
    name: "node:assert's AssertionError",
    err: new AssertionError({ message: 'seat must exist' }),
    kind: 'handler-bug',
    code: 'AssertionError',
  },
  {
    name: 'a TypeError wrapped as the cause of a plain Error',
    err: new Error('applying failed', { cause: new TypeError('x is not a function') }),
    kind: 'handler-bug',
    code: 'TypeError',
  },
  {
    name: "Node's own ERR_INVALID_ARG_TYPE (a TypeError with an ERR_ code)",
    err: thrown(() => Buffer.from(42 as unknown as string)),
    kind: 'handler-bug',
    code: 'TypeError',
  },
  {
    name: 'poison wins over a bug in the same chain',
    err: new PoisonError('data error', 'bad value', { cause: new TypeError('x') }),
    kind: 'poison',
    reason: 'data error',
  },
  {
    name: 'a system error (ECONNREFUSED)',
    err: systemError('ECONNREFUSED'),
    kind: 'infrastructure',
    code: 'ECONNREFUSED',
  },
  {
    name: "fetch's TypeError whose cause is a socket error: the network, not a bug",
    err: new TypeError('fetch failed', { cause: systemError('ECONNREFUSED') }),
    kind: 'infrastructure',
    code: 'ECONNREFUSED',
  },
  {
    name: "fetch's TypeError whose cause is undici's socket error",
    err: new TypeError('fetch failed', {
      cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
    }),
    kind: 'infrastructure',
    code: 'UND_ERR_SOCKET',
  },
  { name: 'a Postgres read-only error (25006)', err: pgError('25006'), kind: 'infrastructure', code: '25006' },
  {
    name: 'a TransientError, even around a TypeError',
    err: new TransientError('provider_unavailable', 'the provider answered 503', { cause: new TypeError('x') }),
    kind: 'infrastructure',
    code: 'provider_unavailable',
  },
  {
    name: 'one of our PipelineErrors',
    err: new PipelineError('schema_registry_unavailable', 'away'),
    kind: 'infrastructure',
    code: 'schema_registry_unavailable',
  },
  {
    name: 'a kafkajs error',
    err: Object.assign(new Error('broker gone'), { name: 'KafkaJSConnectionError' }),
    kind: 'infrastructure',
    code: 'KafkaJSConnectionError',
  },
  {
    name: "node-postgres's query timeout (a connection that stopped answering)",
    err: new Error('Query read timeout'),
    kind: 'infrastructure',
    code: 'postgres_unanswered',
  },
  {
    name: 'the query timeout as the cause of a wrapped error',
    err: new Error('apply failed', { cause: new Error('Query read timeout') }),
    kind: 'infrastructure',
    code: 'postgres_unanswered',
  },
  { name: 'a plain Error nobody classified', err: new Error('something'), kind: 'infrastructure', code: 'error' },
  { name: 'a thrown string', err: 'nope', kind: 'infrastructure', code: 'error' },
];

describe('classifyFailure', () => {
  it.each(cases)('$name: $kind', ({ err, kind, code, reason }) => {
    const failure = classifyFailure(err);
    expect(failure.kind).toBe(kind);
    if (failure.kind === 'poison') expect(failure.reason).toBe(reason);
    else expect(failure.code).toBe(code);
  });

  it("keeps a handler bug's stack trace, pointing into the handler", () => {
    function applySeatHeld(): never {
      throw new TypeError('cannot read properties of undefined');
    }
    const failure = classifyFailure(thrown(applySeatHeld));
    expect(failure.kind).toBe('handler-bug');
    expect(failure.kind === 'handler-bug' && failure.stack).toContain('applySeatHeld');
  });
});
