/**
 * The schema registry behind one small module (Apicurio's Confluent-compatible API, spoken by
 * @kafkajs/confluent-schema-registry): register with a compatibility rule, encode, decode.
 */
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import avro from 'avsc';
import { PipelineError } from './errors.js';

export type Compatibility = 'BACKWARD' | 'BACKWARD_TRANSITIVE' | 'FORWARD' | 'FULL' | 'NONE';

export interface Registry {
  url: string;
  client: SchemaRegistry;
  /** Each request's bound, the client's and this module's own calls alike. */
  requestTimeoutMs: number;
}

/**
 * How long one request to the registry may go unanswered before it fails. Without it a registry
 * that accepts a connection and never answers (hung, or half-open behind a proxy) held a decode,
 * and with it the partition, for good, with nothing logged; failed, it is the infrastructure's
 * (schema_registry_unavailable): held and retried.
 */
export const REGISTRY_REQUEST_TIMEOUT_MS = 10_000;

type ClientMiddleware = NonNullable<ConstructorParameters<typeof SchemaRegistry>[0]['middlewares']>[number];

/** The client's HTTP layer (mappersmith) bounds a request that has no timeout of its own. */
const requestTimeout =
  (ms: number): ClientMiddleware =>
  () => ({
    async prepareRequest(next) {
      const request = await next();
      return request.timeout() ? request : request.enhance({ timeout: ms });
    },
  });

export function createSchemaRegistry(
  url: string,
  { requestTimeoutMs = REGISTRY_REQUEST_TIMEOUT_MS }: { requestTimeoutMs?: number } = {},
): Registry {
  return {
    url,
    client: new SchemaRegistry({ host: url, middlewares: [requestTimeout(requestTimeoutMs)] }),
    requestTimeoutMs,
  };
}

const JSON_TYPE = 'application/vnd.schemaregistry.v1+json';

/** The registry URL for messages and logs: without user name and password. */
export function registryAddress(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(an unparsable registry URL)';
  }
}

/**
 * One call to the registry's API. User info in the URL becomes a basic Authorization header, as the
 * registry client sends it (fetch refuses a URL with credentials).
 */
async function registryFetch(registry: Registry, path: string, init: RequestInit = {}): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE, accept: JSON_TYPE };
  const url = new URL(`${registry.url}${path}`);
  if (url.username !== '' || url.password !== '') {
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  try {
    return await fetch(url, { ...init, headers, signal: AbortSignal.timeout(registry.requestTimeoutMs) });
  } catch (cause) {
    throw new PipelineError(
      'schema_registry_unavailable',
      `the schema registry at ${registryAddress(registry.url)} does not answer; start it (npm run stack -- start) or fix the registry URL`,
      { cause },
    );
  }
}

/** The latest registered schema text of a subject, or undefined when the subject is new. */
export async function latestSchema(registry: Registry, subject: string): Promise<string | undefined> {
  const response = await registryFetch(registry, `/subjects/${encodeURIComponent(subject)}/versions/latest`);
  if (response.status === 404) return undefined;
  if (!response.ok)
    throw new PipelineError(
      'schema_registry_error',
      `reading ${subject}: HTTP ${response.status} ${await response.text()}`,
    );
  return ((await response.json()) as { schema: string }).schema;
}

async function setCompatibility(registry: Registry, subject: string, compatibility: Compatibility): Promise<void> {
  const response = await registryFetch(registry, `/config/${encodeURIComponent(subject)}`, {
    method: 'PUT',
    body: JSON.stringify({ compatibility }),
  });
  if (!response.ok)
    throw new PipelineError(
      'schema_registry_error',
      `setting ${compatibility} on ${subject}: HTTP ${response.status} ${await response.text()}`,
    );
}

/** Every registered version of a subject, oldest first (empty when the subject is new). */
async function registeredVersions(registry: Registry, subject: string): Promise<{ version: number; schema: string }[]> {
  const path = `/subjects/${encodeURIComponent(subject)}/versions`;
  const response = await registryFetch(registry, path);
  if (response.status === 404) return [];
  if (!response.ok)
    throw new PipelineError(
      'schema_registry_error',
      `listing versions of ${subject}: HTTP ${response.status} ${await response.text()}`,
    );
  const versions = ((await response.json()) as number[]).sort((a, b) => a - b);
  return Promise.all(
    versions.map(async (version) => {
      const one = await registryFetch(registry, `${path}/${version}`);
      if (!one.ok)
        throw new PipelineError(
          'schema_registry_error',
          `reading ${subject} version ${version}: HTTP ${one.status} ${await one.text()}`,
        );
      return { version, schema: ((await one.json()) as { schema: string }).schema };
    }),
  );
}

/** Field by field, why `schema` cannot read what each registered version wrote. */
async function whyIncompatible(registry: Registry, subject: string, schema: string): Promise<string[]> {
  const versions = await registeredVersions(registry, subject).catch(() => []);
  return versions.flatMap(({ version, schema: old }) =>
    incompatibleFields(old, schema).map((problem) => `${problem} (against version ${version})`),
  );
}

/**
 * Registers an Avro schema under `subject` with the given compatibility rule and returns its id.
 * An incompatible change is refused with a message naming the subject, the offending fields and
 * the versions they break. BACKWARD_TRANSITIVE by default: consumers decode every version ever
 * registered (a recovery replays days of events), so a new schema must read all of them, not
 * only the latest.
 */
export async function registerAvroSchema(
  registry: Registry,
  subject: string,
  schema: string,
  compatibility: Compatibility = 'BACKWARD_TRANSITIVE',
): Promise<number> {
  const previous = await latestSchema(registry, subject);
  if (previous !== undefined) await setCompatibility(registry, subject, compatibility);
  try {
    // The client refuses to register when the subject's rule differs from the one it is told.
    const { id } = await registry.client.register(
      { type: SchemaType.AVRO, schema },
      { subject, compatibility: COMPATIBILITY[compatibility] },
    );
    if (previous === undefined) await setCompatibility(registry, subject, compatibility);
    return id;
  } catch (cause) {
    const status = (cause as { status?: number }).status;
    if (status !== 409) throw new PipelineError('schema_registry_error', `registering ${subject} failed`, { cause });
    const fields = previous === undefined ? [] : await whyIncompatible(registry, subject, schema);
    const registryWords = /list of diff types: \[([^\]]*)\]/.exec(String((cause as Error).message))?.[1];
    const named = fields.length > 0 ? fields.join('; ') : (registryWords ?? 'see the registry log');
    throw new PipelineError(
      'schema_incompatible',
      `the schema for subject ${subject} is not ${compatibility} compatible with the registered versions: ${named}. ` +
        'Give new fields a default, keep existing fields and their types, or publish the change under a new event type.',
      { cause, details: { subject, fields } },
    );
  }
}

interface AvroField {
  name: string;
  type: unknown;
}

/** True when Avro's schema resolution lets `reader` read what `writer` wrote (avsc decides). */
function canRead(reader: avro.Type, writer: avro.Type): boolean {
  try {
    reader.createResolver(writer);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why a new record schema cannot read data written with the old one (BACKWARD), field by field;
 * empty when it can. Avro's schema resolution (avsc's resolver, the one consumers decode with)
 * decides, so the legal promotions (int → long → float → double, string ↔ bytes, into a union),
 * aliases and defaults count as they do when the data is read. These words only explain a refusal
 * the registry made.
 */
export function incompatibleFields(previousSchema: string, nextSchema: string): string[] {
  const rawFields = (text: string) => (JSON.parse(text) as { fields?: AvroField[] }).fields ?? [];
  const writer = avro.Type.forSchema(JSON.parse(previousSchema) as avro.Schema);
  const reader = avro.Type.forSchema(JSON.parse(nextSchema) as avro.Schema);
  if (canRead(reader, writer)) return [];
  if (!(reader instanceof avro.types.RecordType) || !(writer instanceof avro.types.RecordType))
    return [`${reader.typeName} cannot read ${writer.typeName}`];
  const oldRaw = new Map(rawFields(previousSchema).map((f) => [f.name, f]));
  const newRaw = rawFields(nextSchema);
  const problems = reader.fields.flatMap((field, index): string[] => {
    const old = [field.name, ...field.aliases].map((name) => writer.field(name)).find((f) => f !== undefined);
    if (old === undefined)
      return field.defaultValue() === undefined ? [`field "${field.name}" was added without a default`] : [];
    if (canRead(field.type, old.type)) return [];
    const was = JSON.stringify(oldRaw.get(old.name)?.type);
    return [`field "${field.name}" changed type from ${was} to ${JSON.stringify(newRaw[index]?.type)}`];
  });
  return problems.length > 0 ? problems : [`record ${reader.name ?? ''} cannot read record ${writer.name ?? ''}`];
}

/** Confluent wire format: magic byte 0, 4-byte schema id, Avro body. */
export function encodeWithSchema(registry: Registry, schemaId: number, payload: unknown): Promise<Buffer> {
  return registry.client.encode(schemaId, payload);
}

/** Reads the schema id from the wire format and decodes with that (any registered) version. */
export function decodeWithSchema<T = unknown>(registry: Registry, bytes: Buffer): Promise<T> {
  return registry.client.decode(bytes) as Promise<T>;
}

/** The schema id of a wire-format buffer, or undefined when the bytes are not in that format. */
export function wireSchemaId(bytes: Buffer): number | undefined {
  if (bytes.length < 5 || bytes[0] !== 0) return undefined;
  return bytes.readInt32BE(1);
}

// ── is the registry the one the events were written to, with its schemas? ─────────────────────

/**
 * What shows that a registry still holds a consumer's schemas: the reader schemas it was built
 * for (each registered under its subject, the record's full name, after any prefix the producers
 * use) and schema ids it read from this registry before (each still resolves).
 */
export interface RegistryEvidence {
  readerSchemas: readonly string[];
  knownIds: readonly number[];
}

/** The registry subject of an Avro record schema: its full name (namespace.name). */
export function subjectOfSchema(schema: string): string | undefined {
  try {
    const parsed = JSON.parse(schema) as { type?: unknown; name?: unknown; namespace?: unknown };
    if (parsed.type !== 'record' || typeof parsed.name !== 'string') return undefined;
    if (parsed.name.includes('.') || typeof parsed.namespace !== 'string' || parsed.namespace === '')
      return parsed.name;
    return `${parsed.namespace}.${parsed.name}`;
  } catch {
    return undefined;
  }
}

/** One probe's answer: undefined when the registry served it, else what it lacks. */
type ProbeAnswer = string | undefined;

/** How long a probe's answer is reused: retries of a held partition cost the registry one request per probe at most this often. */
const REGISTRY_PROBE_TTL_MS = 5_000;

const probeCache = new WeakMap<Registry, Map<string, { at: number; answer: Promise<ProbeAnswer> }>>();

function cachedProbe(
  registry: Registry,
  key: string,
  probe: () => Promise<ProbeAnswer>,
  now = Date.now(),
): Promise<ProbeAnswer> {
  let cache = probeCache.get(registry);
  if (cache === undefined) probeCache.set(registry, (cache = new Map()));
  const hit = cache.get(key);
  if (hit !== undefined && now - hit.at < REGISTRY_PROBE_TTL_MS) return hit.answer;
  const answer = probe().catch((err: unknown) => {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    return `it does not answer (${cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause)})`;
  });
  cache.set(key, { at: now, answer });
  return answer;
}

/** Undefined for a 2xx; else `<what> (HTTP <status>: <the body's start>)`. */
async function answered(response: Response, what: string): Promise<ProbeAnswer> {
  if (response.ok) return undefined;
  const body = (await response.text().catch(() => '')).slice(0, 160);
  return `${what} (HTTP ${response.status}${body === '' ? '' : `: ${body}`})`;
}

/** Most subjects a reader schema is looked up under (one per SCHEMA_SUBJECT_PREFIX sharing the registry). */
const SUBJECTS_LOOKED_UP = 5;

/**
 * Most pages of GET /subjects read for a prefixed subject. A registry may answer one page only
 * (Apicurio: `apicurio.ccompat.max-subjects`, 1,000 by default): the list is read on with `offset`.
 */
const SUBJECT_PAGES_READ = 50;

/** Subjects ending in `name`, at most SUBJECTS_LOOKED_UP, read page by page; or what the listing lacks. */
async function subjectsEndingWith(
  registry: Registry,
  name: string,
): Promise<{ subjects: string[]; readAll: boolean; read: number } | { problem: string }> {
  const found: string[] = [];
  let offset = 0;
  let previousFirst: string | undefined;
  let readAll = false;
  for (let page = 0; page < SUBJECT_PAGES_READ && found.length < SUBJECTS_LOOKED_UP; page += 1) {
    const listed = await registryFetch(registry, offset === 0 ? '/subjects' : `/subjects?offset=${offset}`);
    if (!listed.ok) return { problem: (await answered(listed, 'GET /subjects fails')) ?? 'GET /subjects fails' };
    const body = (await listed.json().catch(() => undefined)) as unknown;
    const subjects = (Array.isArray(body) ? body : []).filter((s): s is string => typeof s === 'string');
    // An empty page ends the list; so does the first page again (a registry that ignores `offset` lists everything at once).
    if (subjects.length === 0 || (page > 0 && subjects[0] === previousFirst)) {
      readAll = true;
      break;
    }
    previousFirst = subjects[0];
    found.push(...subjects.filter((s) => s.endsWith(name) && !found.includes(s)));
    offset += subjects.length;
  }
  return { subjects: found.slice(0, SUBJECTS_LOOKED_UP), readAll, read: offset };
}

/** POST /subjects/<subject> looks the schema up under the subject; it registers nothing. */
async function registeredUnder(registry: Registry, subject: string, schema: string): Promise<boolean> {
  const found = await registryFetch(registry, `/subjects/${encodeURIComponent(subject)}`, {
    method: 'POST',
    body: JSON.stringify({ schema }),
  });
  await found.body?.cancel();
  return found.ok;
}

function readerSchemaProbe(registry: Registry, schema: string): Promise<ProbeAnswer> {
  const name = subjectOfSchema(schema);
  if (name === undefined) return Promise.resolve('a reader schema that is not an Avro record');
  return cachedProbe(registry, `reader\u0000${schema}`, async () => {
    if (await registeredUnder(registry, name, schema)) return undefined;
    // The producers may prefix subjects (SCHEMA_SUBJECT_PREFIX), which a consumer does not know: any subject ending in the name.
    const listing = await subjectsEndingWith(registry, name);
    if ('problem' in listing) return listing.problem;
    const { subjects } = listing;
    const prefixed = subjects.filter((subject) => subject !== name);
    if (subjects.length === 0)
      return listing.readAll
        ? `no subject is named ${name} (with or without a prefix)`
        : `no subject named ${name} (with or without a prefix) among the first ${listing.read} subjects the registry lists (${SUBJECT_PAGES_READ} pages read; it lists more)`;
    for (const subject of prefixed) if (await registeredUnder(registry, subject, schema)) return undefined;
    return `the reader schema of ${name} is not registered under ${subjects.join(', ')}`;
  });
}

function knownIdProbe(registry: Registry, id: number): Promise<ProbeAnswer> {
  return cachedProbe(registry, `id\u0000${id}`, async () =>
    answered(await registryFetch(registry, `/schemas/ids/${id}`), `schema id ${id}, read from it before, is gone`),
  );
}

/**
 * Undefined when the registry demonstrably holds the consumer's schemas (every piece of evidence
 * checks out, and there is some); otherwise what speaks against it, in words. Answers are cached briefly.
 */
export async function registryMissing(registry: Registry, evidence: RegistryEvidence): Promise<string | undefined> {
  const probes = [
    ...evidence.readerSchemas.map((schema) => readerSchemaProbe(registry, schema)),
    ...evidence.knownIds.map((id) => knownIdProbe(registry, id)),
  ];
  if (probes.length === 0)
    return 'this consumer has no reader schema and has decoded nothing from it yet, so nothing shows it is the right registry';
  const missing = (await Promise.all(probes)).filter((answer): answer is string => answer !== undefined);
  return missing.length === 0 ? undefined : missing.join('; ');
}
