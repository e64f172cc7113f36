/**
 * Makes the stack's Apicurio list GET /subjects in short pages, as a registry shared by many
 * teams does once it holds more subjects than `apicurio.ccompat.max-subjects` (1,000 by default).
 * Apicurio changes the setting at run time; the returned function puts the old value back.
 */
import type { StackEndpoints } from './stack.js';

const SETTING = 'apicurio.ccompat.max-subjects';

function settingUrl(stack: StackEndpoints): string {
  return `${new URL(stack.registryUrl).origin}/apis/registry/v3/admin/config/properties/${SETTING}`;
}

async function setSetting(stack: StackEndpoints, value: string): Promise<void> {
  const response = await fetch(settingUrl(stack), {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ value }),
  });
  if (!response.ok) throw new Error(`PUT ${SETTING}=${value} at the registry answered HTTP ${response.status}`);
}

/** Most pages read to count the subjects: a registry with more is not one this test pages. */
const PAGES_COUNTED = 200;

/** How many subjects the registry lists now, read page by page. */
async function subjectCount(stack: StackEndpoints): Promise<number> {
  let count = 0;
  let previousFirst: string | undefined;
  for (let pages = 0; pages < PAGES_COUNTED; pages += 1) {
    const response = await fetch(`${stack.registryUrl}/subjects?offset=${count}`);
    if (!response.ok) throw new Error(`GET /subjects at the registry answered HTTP ${response.status}`);
    const page = (await response.json()) as string[];
    if (page.length === 0) return count;
    if (pages > 0 && page[0] === previousFirst)
      throw new Error(
        'the registry ignores ?offset= on GET /subjects: it cannot be paged, so this test cannot run on it',
      );
    previousFirst = page[0];
    count += page.length;
  }
  throw new Error(`the registry lists more than ${PAGES_COUNTED} pages of subjects: count them another way`);
}

/**
 * Lists the subjects there now on the first page of GET /subjects, and any registered from now
 * on on later pages only (Apicurio pages them in the order they were created).
 */
export async function pageSubjectsRegisteredFromNow(stack: StackEndpoints): Promise<() => Promise<void>> {
  const current = await fetch(settingUrl(stack));
  if (!current.ok) throw new Error(`GET ${SETTING} at the registry answered HTTP ${current.status}`);
  const { value } = (await current.json()) as { value: string };
  const count = await subjectCount(stack);
  if (count === 0) throw new Error('the registry lists no subject: register one before paging the rest');
  await setSetting(stack, String(count));
  return () => setSetting(stack, value);
}
