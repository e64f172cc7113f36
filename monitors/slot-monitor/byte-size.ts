/** Byte counts written for people ("12.5 MB") and for Postgres ("10240MB"). */
const UNITS = ['B', 'kB', 'MB', 'GB', 'TB'] as const;

/** 13107200 → "12.5 MB"; -1 → "-1 (unlimited)". */
export function formatBytes(bytes: number): string {
  if (bytes < 0) return bytes === -1 ? '-1 (unlimited)' : `${bytes} B`;
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const shown = unit === 0 || Number.isInteger(value) ? String(value) : value.toFixed(1);
  return `${shown} ${UNITS[unit]}`;
}

/** A max_slot_wal_keep_size value as Postgres takes it: whole megabytes ("10240MB"), or "-1". */
export function postgresMegabytes(bytes: number): string {
  return bytes < 0 ? '-1' : `${Math.floor(bytes / (1024 * 1024))}MB`;
}
