/**
 * The one place that takes passwords out of URLs before they are shown: settings errors, logged
 * configurations, log lines. A URL's user name stays (it says which role connected); its password,
 * everything after the first `:` of the user info, becomes `***`.
 */

/**
 * A URL's user info: after `scheme://`, up to the last `@` before the host (a password may hold a
 * raw `@`), never across a space, a quote, `/`, `?` or `#`.
 */
const USER_INFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#"'`<>]*)@/gi;

/** `text` with the password of every URL in it replaced: `postgres://user:***@host/db`. */
export function withoutUserInfo(text: string): string {
  return text.replace(USER_INFO, (_match, scheme: string, userInfo: string) => {
    const colon = userInfo.indexOf(':');
    return colon === -1 ? `${scheme}${userInfo}@` : `${scheme}${userInfo.slice(0, colon)}:***@`;
  });
}

/** `value` with withoutUserInfo applied to every string in it (plain objects and arrays, a few levels deep). */
export function redactUserInfo<T>(value: T, depth = 4): T {
  if (typeof value === 'string') return withoutUserInfo(value) as T;
  if (depth === 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item: unknown) => redactUserInfo(item, depth - 1)) as T;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactUserInfo(item, depth - 1)])) as T;
}
