/**
 * The rehearsal's HTML report: one self-contained file (no scripts, fonts or styles fetched from
 * anywhere) with the record embedded as JSON and charts drawn by inline code.
 */
import type { RehearsalRecord } from './record.js';

export function renderHtmlReport(record: RehearsalRecord): string {
  return `<!doctype html><meta charset="utf-8"><title>Rehearsal ${record.showId.replace(/[<&>"']/g, '')}</title>`;
}
