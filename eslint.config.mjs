// Lint: typescript-eslint's type-aware rules on the packages' sources, its plain rules on the
// tests, examples and benchmarks. `npm test` runs it (`npm run lint`).
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'bench/results/**',
      'coverage/**',
      '.stryker-tmp/**',
      'reports/**',
      '**/*.js',
      '**/*.cjs',
      '**/*.mjs',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['packages/*/src/**/*.ts'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Promises handed to callers or deliberately not awaited are marked with `void`.
      '@typescript-eslint/no-floating-promises': 'error',
      // Framework handlers (Fastify's error handler) may return a promise where their types say void.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { returns: false } }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // Block errors are Errors at run time (their prototype is Error's) without running Error's
      // constructor, so TypeScript does not see them as Errors; abort reasons and rethrown
      // values are whatever the caller gave.
      '@typescript-eslint/only-throw-error': [
        'error',
        {
          allow: [
            { from: 'file', name: 'BlockError' },
            { from: 'file', name: 'BlockError', path: 'packages/core/src/kernel/errors.ts' },
            { from: 'file', name: 'BlockError', path: 'packages/core/dist/kernel/errors.d.ts' },
            { from: 'package', name: 'BlockError', package: '@floodgate/core' },
          ],
        },
      ],
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
    },
  },
  {
    // Decorators deal in classes and methods of any shape.
    files: ['packages/core/src/decorators/**/*.ts'],
    rules: { '@typescript-eslint/no-unsafe-function-type': 'off' },
  },
  {
    // The import matrix's CommonJS consumer imports as CommonJS TypeScript does: `import x = require()`.
    files: ['test/packages/consumer/**'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    rules: {
      // `any` appears only where a decorator factory cannot name the method's arguments, each with a comment.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
