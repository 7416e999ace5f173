// Lint: typescript-eslint's recommended rules, promises that must not float, and the purity
// boundary — decisions (packages/api, packages/scheduling, services/*/src/logic, packages/cli/src/logic) import no I/O.
import tseslint from "typescript-eslint";

const IO_PACKAGES = ["@flotilla/store", "@flotilla/kube", "@flotilla/events", "@flotilla/runtime", "postgres", "@nats-io/*", "@grpc/grpc-js", "@flotilla/proto/grpc", "fastify", "node:fs", "node:fs/promises", "node:net", "node:http", "node:https", "node:child_process", "fs", "net", "http", "https", "child_process"];

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/src/gen/**", "coverage/**", ".turbo/**", "**/*.mjs", "**/*.js", "packages/*/bench/**"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    languageOptions: {
      // one program over sources and tests, as the typecheck builds it
      parserOptions: { project: ["./tsconfig.tests.json"], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // node:test's test/describe return promises the runner awaits
      "@typescript-eslint/no-floating-promises": ["error", { allowForKnownSafeCalls: [{ from: "package", name: ["test", "describe", "it", "suite"], package: "node:test" }] }],
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false, attributes: false } }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
  {
    // pure decisions: no I/O, no clock or randomness beyond what is passed in
    files: ["packages/api/src/**/*.ts", "packages/scheduling/src/**/*.ts", "services/*/src/logic/**/*.ts", "packages/cli/src/logic/**/*.ts", "packages/member-apply/src/logic/**/*.ts", "packages/tunnel/src/logic/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      // type-only imports are erased: they bring no I/O
      "@typescript-eslint/no-restricted-imports": ["error", { patterns: [{ group: IO_PACKAGES, allowTypeImports: true, message: "logic stays pure: no I/O here (pass data in, return decisions)" }] }],
    },
  },
);
