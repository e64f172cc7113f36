import { compiledScripts } from './lib/source-tree.js';

export default {
  entry: [
    'consumers/runtime/index.ts',
    'consumers/runtime/testing/index.ts',
    'examples/seat-watch/main.ts',
    'test/consumers/helpers/counted-consumer-program.ts',
    // The HTML report's browser code, read as a file (rehearsal/html-report.ts), never imported.
    'rehearsal/html/charts.js',
    // The programs that npm scripts run compiled (dist/): their sources.
    ...compiledScripts().map((c) => c.source),
  ],
  ignoreBinaries: ['mvn', 'apt-get', 'pg_config', 'prometheus', 'promtool', 'flock', 'java', 'amtool'],
};
