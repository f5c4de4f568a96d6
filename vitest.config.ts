import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * Test files run at once in `npm test`: vitest's default (one fewer than the cores) is one on a
 * 2-core machine, where the int files, which mostly wait on servers and child processes, then
 * ran one at a time and `npm test` took 15 minutes (9 with two).
 */
const testFilesAtOnce = Math.max(2, availableParallelism() - 1);

/**
 * Two projects. `unit`: the tests beside the code (and those of the docs' scripts in
 * `scripts/`) that need no server and no build; the packages resolve to their TypeScript
 * sources, so a one-line change is tested in seconds (`npm run test:unit`). `int`: `*.int.test.ts` and everything under `tests/`, which use real
 * PostgreSQL and Redis servers, child processes and the built `dist/` exactly as users get it;
 * its global setup builds the packages and starts the servers. `npm test` runs both.
 * `chaos`: the short chaos run, `npm run test:chaos` (CI runs it beside `npm test`).
 */
export default defineConfig({
  test: {
    testTimeout: 20_000,
    projects: [
      {
        extends: true,
        resolve: {
          alias: [
            {
              find: /^@tenxgraph\/core\/testing$/,
              replacement: source("./packages/core/src/testing/index.ts"),
            },
            {
              find: /^@tenxgraph\/core\/host$/,
              replacement: source("./packages/core/src/host/index.ts"),
            },
            {
              find: /^@tenxgraph\/core\/interop$/,
              replacement: source("./packages/core/src/interop/index.ts"),
            },
            {
              find: /^@tenxgraph\/core\/storage$/,
              replacement: source("./packages/core/src/storage/index.ts"),
            },
            { find: /^@tenxgraph\/core$/, replacement: source("./packages/core/src/index.ts") },
            // The inspector's tests use the client by name, as the page does.
            {
              find: /^@tenxgraph\/client$/,
              replacement: source("./packages/client/src/index.ts"),
            },
            // The client's sender as Node.js loads it (package.json `imports`, `node` condition).
            {
              find: /^#default-sender$/,
              replacement: source("./packages/client/src/default-sender-node.ts"),
            },
          ],
        },
        test: {
          name: "unit",
          maxWorkers: testFilesAtOnce,
          include: [
            "packages/*/src/**/*.test.ts",
            "packages/server/inspector/src/**/*.test.ts",
            "scripts/**/*.test.ts",
            "bench/src/**/*.test.ts",
          ],
          exclude: ["packages/*/src/**/*.int.test.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "int",
          maxWorkers: testFilesAtOnce,
          include: ["packages/*/src/**/*.int.test.ts", "tests/**/*.test.ts"],
          exclude: ["tests/chaos/**"],
          globalSetup: ["tests/global-setup.ts"],
        },
      },
      {
        // The short chaos run (50 kills per store): `npm run test:chaos`, a step of its own in
        // CI, so `npm test` stays under 15 minutes; `npm run chaos -- --kills 1000` is the long run.
        extends: true,
        test: {
          name: "chaos",
          include: ["tests/chaos/**/*.test.ts"],
          globalSetup: ["tests/global-setup.ts"],
        },
      },
    ],
  },
});
