import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Each library behind one module: the rest of the code imports that module. */
const ONLY_LIB_KAFKA = {
  name: 'kafkajs',
  message: 'Import the Kafka client and its types from lib/kafka.ts, its only importer.',
};
const ONLY_LIB_TRACING = {
  group: ['@opentelemetry/*'],
  message:
    'Spans are started and traceparents read in lib/tracing.ts, the only program module importing OpenTelemetry.',
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'dist.*/**', '.stack/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
      'no-restricted-imports': ['error', { paths: [ONLY_LIB_KAFKA], patterns: [ONLY_LIB_TRACING] }],
    },
  },
  // The tests read spans with the OpenTelemetry SDK; lib/tracing.ts and lib/kafka.ts are the importers.
  {
    files: ['test/**/*.ts', 'lib/tracing.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [ONLY_LIB_KAFKA] }] },
  },
  { files: ['lib/kafka.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [ONLY_LIB_TRACING] }] } },
  {
    // A test that does not run is no test: the suite fails on one (test/suite-totals.ts), and lint names it first.
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...['describe', 'it', 'test', 'suite', 'bench'].flatMap((fn) =>
          ['skip', 'only', 'todo', 'skipIf', 'runIf', 'fails'].map((mod) => ({
            selector: `MemberExpression[object.name='${fn}'][property.name='${mod}']`,
            message: `${fn}.${mod}: every test runs in the suite (an unrun test counts as failed); remove .${mod} or the test.`,
          })),
        ),
        {
          selector: "CallExpression[callee.property.name='skip'][callee.object.name=/^(ctx|context|t)$/]",
          message:
            'A test that skips itself at run time is a skipped test: the suite counts it as failed; make its precondition a failure instead.',
        },
      ],
    },
  },
);
