/**
 * The schema registry behind one small module (Apicurio's Confluent-compatible API, spoken by
 * @kafkajs/confluent-schema-registry): register with a compatibility rule, encode, decode.
 */
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { PipelineError } from './errors.js';

export type Compatibility = 'BACKWARD' | 'BACKWARD_TRANSITIVE' | 'FORWARD' | 'FULL' | 'NONE';

export interface Registry {
  url: string;
  client: SchemaRegistry;
}

export function createSchemaRegistry(url: string): Registry {
  return { url, client: new SchemaRegistry({ host: url }) };
}

const JSON_TYPE = 'application/vnd.schemaregistry.v1+json';

async function registryFetch(registry: Registry, path: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(`${registry.url}${path}`, {
      ...init,
      headers: { 'content-type': JSON_TYPE, accept: JSON_TYPE },
      signal: AbortSignal.timeout(10_000),
    });
  } catch (cause) {
    throw new PipelineError('schema_registry_unreachable', `the schema registry at ${registry.url} does not answer; start it (npm run stack -- start) or fix the registry URL`, { cause });
  }
}

/** The latest registered schema text of a subject, or undefined when the subject is new. */
export async function latestSchema(registry: Registry, subject: string): Promise<string | undefined> {
  const response = await registryFetch(registry, `/subjects/${encodeURIComponent(subject)}/versions/latest`);
  if (response.status === 404) return undefined;
  if (!response.ok) throw new PipelineError('schema_registry_error', `reading ${subject}: HTTP ${response.status} ${await response.text()}`);
  return ((await response.json()) as { schema: string }).schema;
}

async function setCompatibility(registry: Registry, subject: string, compatibility: Compatibility): Promise<void> {
  const response = await registryFetch(registry, `/config/${encodeURIComponent(subject)}`, {
    method: 'PUT',
    body: JSON.stringify({ compatibility }),
  });
  if (!response.ok) throw new PipelineError('schema_registry_error', `setting ${compatibility} on ${subject}: HTTP ${response.status} ${await response.text()}`);
}

/** Every registered version of a subject, oldest first (empty when the subject is new). */
async function registeredVersions(registry: Registry, subject: string): Promise<{ version: number; schema: string }[]> {
  const path = `/subjects/${encodeURIComponent(subject)}/versions`;
  const response = await registryFetch(registry, path);
  if (response.status === 404) return [];
  if (!response.ok) throw new PipelineError('schema_registry_error', `listing versions of ${subject}: HTTP ${response.status} ${await response.text()}`);
  const versions = ((await response.json()) as number[]).sort((a, b) => a - b);
  return Promise.all(
    versions.map(async (version) => {
      const one = await registryFetch(registry, `${path}/${version}`);
      if (!one.ok) throw new PipelineError('schema_registry_error', `reading ${subject} version ${version}: HTTP ${one.status} ${await one.text()}`);
      return { version, schema: ((await one.json()) as { schema: string }).schema };
    }),
  );
}

/** Field by field, why `schema` cannot read what each registered version wrote. */
async function whyIncompatible(registry: Registry, subject: string, schema: string): Promise<string[]> {
  const versions = await registeredVersions(registry, subject).catch(() => []);
  return versions.flatMap(({ version, schema: old }) => incompatibleFields(old, schema).map((problem) => `${problem} (against version ${version})`));
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
    const { id } = await registry.client.register({ type: SchemaType.AVRO, schema }, { subject, compatibility: COMPATIBILITY[compatibility] });
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
  default?: unknown;
}

/** Why a new record schema cannot read data written with the old one (BACKWARD), field by field. */
export function incompatibleFields(previousSchema: string, nextSchema: string): string[] {
  const fieldsOf = (text: string): AvroField[] => (JSON.parse(text) as { fields?: AvroField[] }).fields ?? [];
  const before = new Map(fieldsOf(previousSchema).map((f) => [f.name, f]));
  const problems: string[] = [];
  for (const field of fieldsOf(nextSchema)) {
    const old = before.get(field.name);
    if (old === undefined && !('default' in field)) problems.push(`field "${field.name}" was added without a default`);
    else if (old !== undefined && JSON.stringify(old.type) !== JSON.stringify(field.type)) {
      problems.push(`field "${field.name}" changed type from ${JSON.stringify(old.type)} to ${JSON.stringify(field.type)}`);
    }
  }
  return problems;
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
