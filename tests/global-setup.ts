import { execFileSync } from "node:child_process";

/**
 * Builds the packages once before any test file runs: the README example and the packed-package
 * test use `dist/` exactly as users get it, and building once avoids two files racing on it.
 */
export default function buildPackages(): void {
  execFileSync("npm", ["run", "build"], {
    cwd: new URL("../", import.meta.url),
    stdio: "inherit",
  });
}
