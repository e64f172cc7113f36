import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', '.stack/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
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
