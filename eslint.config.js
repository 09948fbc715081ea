// Lint (typescript-eslint, type-checked) over src/ and the workspace packages (packages/*/src); formatting is Prettier's (eslint-config-prettier
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
  prettier,
);
