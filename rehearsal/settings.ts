import { defineSettings, zDurationMs, zInt, zPort, zString } from '../lib/settings.js';

export const rehearsalSettings = defineSettings('rehearsal', {
  sections: {
    env: 'REHEARSAL_SECTIONS',
    default: 'A:20x25:12900,B:20x25:8900,C:40x25:5900',
    parser: zString({ pattern: /^[A-Za-z0-9]+:\d+x\d+:\d+(,[A-Za-z0-9]+:\d+x\d+:\d+)*$/, expected: 'sections like A:20x25:12900 (name:rows x seats per row:price in cents), comma separated', example: 'A:20x25:12900,B:40x25:5900' }),
    description: 'The show: sections, rows, seats per row and price. The first section is the one everybody wants.',
  },
  buyers: { env: 'REHEARSAL_BUYERS', default: '2500', parser: zInt({ min: 1, max: 1_000_000, example: '2500' }), description: 'Buyers pressing the button at 10:00.' },
  concurrency: { env: 'REHEARSAL_CONCURRENCY', default: '48', parser: zInt({ min: 1, max: 1000, example: '48' }), description: 'Buyers in flight at the same time (each a seat service call).' },
  abandonPercent: { env: 'REHEARSAL_ABANDON_PERCENT', default: '15', parser: zInt({ min: 0, max: 100, example: '15' }), description: 'Buyers who hold seats and walk away: their holds expire and the sweeper frees the seats.' },
  releasePercent: { env: 'REHEARSAL_RELEASE_PERCENT', default: '5', parser: zInt({ min: 0, max: 100, example: '5' }), description: 'Buyers who hold seats and give them back.' },
  holdTtlMs: { env: 'REHEARSAL_HOLD_TTL_MS', default: '4000', parser: zDurationMs({ min: 1000, example: '4000' }), description: 'Hold expiry during the rehearsal (short, so abandoned holds expire while you watch).' },
  sweepIntervalMs: { env: 'REHEARSAL_SWEEP_INTERVAL_MS', default: '1000', parser: zDurationMs({ min: 100, example: '1000' }), description: 'How often the hold sweeper runs.' },
  countdownMs: { env: 'REHEARSAL_COUNTDOWN_MS', default: '3000', parser: zDurationMs({ min: 0, example: '3000' }), description: 'Time between everything running and "10:00".' },
  drainTimeoutMs: { env: 'REHEARSAL_DRAIN_TIMEOUT_MS', default: '180000', parser: zDurationMs({ min: 1000, example: '180000' }), description: 'How long to wait for every consumer to handle every event before the report says it did not.' },
  smtpPort: { env: 'REHEARSAL_SMTP_PORT', default: '2525', parser: zPort(), description: 'Port of the local SMTP sink that receives the confirmation emails.' },
  keepRunning: { env: 'REHEARSAL_KEEP_CONSUMERS', default: 'no', parser: zString({ pattern: /^(yes|no)$/, expected: 'yes or no', example: 'no' }), description: 'yes leaves the consumers, monitor and mail sink running after the report (stop with Ctrl-C).' },
});
