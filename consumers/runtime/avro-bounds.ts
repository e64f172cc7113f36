/**
 * Checks an Avro body against its writer's schema and the decode limits before avsc decodes it.
 * avsc believes every count and length it reads: an array that claims 2^30 items is allocated
 * item by item until the process runs out of memory. This walk reads only the counts, lengths
 * and indexes (zig-zag varints) and skips over everything else, allocating nothing per value; it
 * stops at the first one that is over a limit or larger than the bytes left could hold.
 *
 *   array and map   each block's count against the collection limit (all the value's collections
 *                   together, so nested ones cannot multiply) and against the bytes left, at the
 *                   items' smallest encoded size; a negative count's byte size against the bytes left
 *   string, bytes   the length against the string limit and the bytes left (a map key is a string)
 *   record, array,  the nesting depth (a recursive schema can nest as deep as its bytes allow)
 *   map
 *   union, enum     the branch or symbol index in range
 *   fixed, numbers  present in full
 */
import type avro from 'avsc';
import { type DecodeLimits, overLimit } from './decode-limits.js';

export type AvroBodyLimits = Pick<DecodeLimits, 'maxCollectionItems' | 'maxStringBytes' | 'maxNestingDepth'>;

/** An Avro body that must not be decoded: over a limit, or declaring more than its bytes hold. */
export class AvroBoundsError extends Error {
  /** Where in the Avro body (after the wire-format header) the walk stopped. */
  readonly offset: number;

  constructor(message: string, offset: number) {
    super(message);
    this.name = 'AvroBoundsError';
    this.offset = offset;
  }
}

/** A writer schema reduced to what the walk needs, built once per schema. */
type Plan =
  | { kind: 'fixed'; size: number }
  | { kind: 'varint' }
  | { kind: 'string' }
  | { kind: 'bytes' }
  | { kind: 'enum'; symbols: number }
  | { kind: 'union'; branches: Plan[] }
  | { kind: 'record'; fields: Plan[] }
  | { kind: 'array'; items: Plan; minItemBytes: number }
  | { kind: 'map'; values: Plan; minItemBytes: number };

type CollectionPlan = Extract<Plan, { kind: 'array' | 'map' }>;

/** The parts of avsc's Type classes the plan is built from. */
interface AvscType {
  typeName: string;
  itemsType?: AvscType;
  valuesType?: AvscType;
  types?: AvscType[];
  fields?: { type: AvscType }[];
  size?: number;
  symbols?: string[];
  underlyingType?: AvscType;
}

const FIXED_SIZES: Readonly<Record<string, number>> = { null: 0, boolean: 1, float: 4, double: 8 };

function compile(type: AvscType, records: Map<AvscType, Plan>, collections: CollectionPlan[]): Plan {
  const name = type.typeName;
  const fixedSize = FIXED_SIZES[name];
  if (fixedSize !== undefined) return { kind: 'fixed', size: fixedSize };
  if (name === 'int' || name === 'long' || name === 'abstract:long') return { kind: 'varint' };
  if (name === 'string' || name === 'bytes') return { kind: name };
  if (name === 'fixed') return { kind: 'fixed', size: type.size ?? 0 };
  if (name === 'enum') return { kind: 'enum', symbols: type.symbols?.length ?? 0 };
  if (name.startsWith('union:'))
    return { kind: 'union', branches: (type.types ?? []).map((t) => compile(t, records, collections)) };
  if (name.startsWith('logical:') && type.underlyingType) return compile(type.underlyingType, records, collections);
  if ((name === 'record' || name === 'error') && type.fields) {
    const known = records.get(type);
    if (known) return known; // a recursive schema: the plan refers to itself
    const plan: Plan = { kind: 'record', fields: [] };
    records.set(type, plan);
    for (const field of type.fields) plan.fields.push(compile(field.type, records, collections));
    return plan;
  }
  if (name === 'array' && type.itemsType) {
    const plan: CollectionPlan = {
      kind: 'array',
      items: compile(type.itemsType, records, collections),
      minItemBytes: 0,
    };
    collections.push(plan);
    return plan;
  }
  if (name === 'map' && type.valuesType) {
    const plan: CollectionPlan = {
      kind: 'map',
      values: compile(type.valuesType, records, collections),
      minItemBytes: 0,
    };
    collections.push(plan);
    return plan;
  }
  throw new Error(`the Avro type ${name} cannot be bounded`);
}

/** The fewest bytes a value of the plan takes; a record met again inside itself counts 0 (a lower bound). */
function minBytes(plan: Plan, inside: Set<Plan>): number {
  switch (plan.kind) {
    case 'fixed':
      return plan.size;
    case 'record': {
      if (inside.has(plan)) return 0;
      inside.add(plan);
      const sum = plan.fields.reduce((total, field) => total + minBytes(field, inside), 0);
      inside.delete(plan);
      return sum;
    }
    default:
      return 1; // a varint: a number, a length, a count, an index
  }
}

/** Builds the check of one writer schema; call the result on each body. */
export function avroBoundsChecker(writer: avro.Type): (body: Buffer, limits: AvroBodyLimits) => void {
  const collections: CollectionPlan[] = [];
  const plan = compile(writer as unknown as AvscType, new Map(), collections);
  for (const collection of collections) {
    const item = collection.kind === 'array' ? collection.items : collection.values;
    // A map entry is its key (a string: at least its length) and its value.
    collection.minItemBytes = minBytes(item, new Set()) + (collection.kind === 'map' ? 1 : 0);
  }
  return (body, limits) => walk(plan, { buf: body, pos: 0, items: 0, limits }, 0);
}

interface Cursor {
  buf: Buffer;
  pos: number;
  /** Array items and map entries declared so far in the whole value. */
  items: number;
  limits: AvroBodyLimits;
}

function truncated(c: Cursor, what: string, needs: number, at: number): AvroBoundsError {
  return new AvroBoundsError(
    `the Avro value is truncated or corrupt: ${what} at byte ${at} needs ${needs} bytes, ${c.buf.length - c.pos} remain`,
    at,
  );
}

/** A zig-zag varint of at most 10 bytes (exact up to 2^53, which is far past every limit). */
function readLong(c: Cursor): number {
  const { buf } = c;
  const at = c.pos;
  let pos = at;
  let value = 0;
  let scale = 1;
  for (;;) {
    if (pos >= buf.length) throw truncated(c, 'a number', pos - at + 1, at);
    const byte = buf[pos++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) break;
    scale *= 128;
    if (pos - at === 10)
      throw new AvroBoundsError(`the Avro value is corrupt: the number at byte ${at} is longer than 10 bytes`, at);
  }
  c.pos = pos;
  return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
}

function skipLength(c: Cursor, kind: 'string' | 'bytes'): void {
  const at = c.pos;
  const length = readLong(c);
  const what = kind === 'string' ? 'a string' : 'a bytes value';
  if (length < 0)
    throw new AvroBoundsError(`the Avro value is corrupt: it declares ${what} of ${length} bytes at byte ${at}`, at);
  if (length > c.limits.maxStringBytes) {
    throw new AvroBoundsError(
      `the Avro value declares ${what} of ${length} bytes, ${overLimit(c.limits, 'maxStringBytes')}`,
      at,
    );
  }
  if (length > c.buf.length - c.pos) throw truncated(c, what, length, at);
  c.pos += length;
}

function enter(c: Cursor, depth: number): number {
  if (depth >= c.limits.maxNestingDepth) {
    throw new AvroBoundsError(
      `the Avro value nests records, arrays and maps more than ${depth} levels deep, ${overLimit(c.limits, 'maxNestingDepth')}`,
      c.pos,
    );
  }
  return depth + 1;
}

function index(c: Cursor, of: number, what: 'branch' | 'symbol'): number {
  const at = c.pos;
  const chosen = readLong(c);
  if (chosen < 0 || chosen >= of) {
    const whole = what === 'branch' ? `a union of ${of} branches` : `an enum of ${of} symbols`;
    throw new AvroBoundsError(`the Avro value is corrupt: it chooses ${what} ${chosen} of ${whole} at byte ${at}`, at);
  }
  return chosen;
}

function walk(plan: Plan, c: Cursor, depth: number): void {
  switch (plan.kind) {
    case 'varint': {
      const at = c.pos;
      const end = Math.min(c.buf.length, at + 10);
      let pos = at;
      while (pos < end && c.buf[pos]! >= 0x80) pos += 1;
      if (pos === at + 10)
        throw new AvroBoundsError(`the Avro value is corrupt: the number at byte ${at} is longer than 10 bytes`, at);
      if (pos === end) throw truncated(c, 'a number', pos - at + 1, at);
      c.pos = pos + 1;
      return;
    }
    case 'string':
    case 'bytes':
      return skipLength(c, plan.kind);
    case 'fixed':
      if (plan.size > c.buf.length - c.pos) throw truncated(c, 'a fixed-size value', plan.size, c.pos);
      c.pos += plan.size;
      return;
    case 'enum':
      index(c, plan.symbols, 'symbol');
      return;
    case 'union':
      return walk(plan.branches[index(c, plan.branches.length, 'branch')]!, c, depth);
    case 'record': {
      const inner = enter(c, depth);
      for (const field of plan.fields) walk(field, c, inner);
      return;
    }
    case 'array':
    case 'map':
      return walkCollection(plan, c, enter(c, depth));
  }
}

function walkCollection(plan: CollectionPlan, c: Cursor, depth: number): void {
  const what = plan.kind === 'array' ? 'an array' : 'a map';
  const unit = plan.kind === 'array' ? 'items' : 'entries';
  const item = plan.kind === 'array' ? plan.items : plan.values;
  const limits = c.limits;
  let declared = 0;
  let blocks = 0;
  for (;;) {
    const at = c.pos;
    let count = readLong(c);
    if (count === 0) return;
    // A negative count is followed by the block's size in bytes.
    const sizeAt = c.pos;
    const sized = count < 0;
    const size = sized ? readLong(c) : 0;
    count = Math.abs(count);
    declared += count;
    blocks += 1;
    const atLeast = blocks > 1 ? 'at least ' : '';
    if (declared > limits.maxCollectionItems)
      throw new AvroBoundsError(
        `the Avro value declares ${what} of ${atLeast}${declared} ${unit}, ${overLimit(limits, 'maxCollectionItems')}`,
        at,
      );
    if (size < 0)
      throw new AvroBoundsError(
        `the Avro value is corrupt: it declares ${what} block of ${size} bytes at byte ${sizeAt}`,
        sizeAt,
      );
    if (size > c.buf.length - c.pos) throw truncated(c, `${what} block declared as ${size} bytes`, size, sizeAt);
    c.items += count;
    if (c.items > limits.maxCollectionItems) {
      throw new AvroBoundsError(
        `the Avro value declares ${c.items} array items and map entries in all, ${overLimit(limits, 'maxCollectionItems')}`,
        at,
      );
    }
    const needs = count * plan.minItemBytes;
    if (needs > c.buf.length - c.pos)
      throw truncated(
        c,
        `${what} of ${atLeast}${declared} ${unit} (${plan.minItemBytes} bytes or more each)`,
        needs,
        at,
      );
    const itemsAt = c.pos;
    for (let i = 0; i < count; i += 1) {
      if (plan.kind === 'map') skipLength(c, 'string');
      walk(item, c, depth);
    }
    // A reader that skips the block (a field its schema dropped) jumps by the declared size: the
    // items must take exactly that, or it would read on from bytes this walk never checked.
    if (sized && c.pos - itemsAt !== size) {
      throw new AvroBoundsError(
        `the Avro value is corrupt: its ${plan.kind} block at byte ${at} declares ${size} bytes, its items take ${c.pos - itemsAt}`,
        at,
      );
    }
  }
}
