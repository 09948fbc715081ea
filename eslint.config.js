// Lint (typescript-eslint, type-checked) over src/, the workspace packages (packages/*/src) and the tests; formatting is Prettier's (eslint-config-prettier
// turns off the stylistic rules that would fight it). `npm run lint` runs both; .ci/run runs it
// before the tests.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', 'completions/**', 'coverage/**'] },
  {
    files: ['src/**/*.ts', 'packages/*/src/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // `_name` marks a parameter kept for its position (handlers, callbacks)
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // The tests: the same rules, type-checked, but for what a test does on purpose: read parsed JSON and
    // stubbed shapes as any (`no-unsafe-*`), and reach into an object it built itself (`no-non-null-assertion` is not on anyway).
    files: ['test/**/*.ts', 'packages/*/testing/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // a test's stand-ins (a fake fetch, a stubbed context) are typed as loosely as the test needs, and
      // answer async interfaces at once (no await in them)
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/require-await': 'off',
      // the harnesses' methods are closures, destructured on purpose (const { cli, env } = harness)
      '@typescript-eslint/unbound-method': 'off',
      // tests match the terminal's escape sequences and the control bytes a hostile value carries
      'no-control-regex': 'off',
    },
  },
  prettier,
);
