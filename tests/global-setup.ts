import { execFileSync } from "node:child_process";
import { shareTestServers } from "@tenxgraph/test-servers/vitest";
import type { TestProject } from "vitest/node";

/**
 * Runs once before any test file: builds the packages, then starts the PostgreSQL and Redis
 * servers the whole run shares (`shareTestServers`, in packages/test-servers: test files read
 * them with `testPostgresDsn()` / `testRedisUrl()`, child processes in the environment variables
 * TENXGRAPH_TEST_POSTGRES_DSN / TENXGRAPH_TEST_REDIS_URL, and a developer who set those two uses
 * servers of their own). The returned teardown stops and deletes the servers started here.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  buildPackages();
  return shareTestServers(project);
}

/**
 * Builds the packages once: the README example and the packed-package test use `dist/` exactly
 * as users get it, and building once avoids two files racing on it.
 */
function buildPackages(): void {
  // `npm test` runs the int and chaos projects in one vitest process, and each project runs its
  // global setup: the second finds the packages already built by the first.
  if (process.env.TENXGRAPH_TEST_PACKAGES_BUILT === "1") return;
  execFileSync("npm", ["run", "build"], {
    cwd: new URL("../", import.meta.url),
    stdio: "inherit",
  });
  process.env.TENXGRAPH_TEST_PACKAGES_BUILT = "1";
}
