/**
 * Text that came from a record (headers a producer or an attacker wrote), made safe to print on a
 * terminal: C0 controls (ESC included, so no escape sequence survives), DEL, C1 controls, and the
 * Unicode controls that reorder or break lines (bidirectional overrides, line and paragraph
 * separators) are shown as `\xNN` or `\uNNNN`; a backslash as `\\`, so an escape is never ambiguous.
 */
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\\\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (char) => {
    if (char === '\\') return '\\\\';
    const point = char.charCodeAt(0);
    return point < 0x100 ? `\\x${point.toString(16).padStart(2, '0')}` : `\\u${point.toString(16).padStart(4, '0')}`;
  });
}
