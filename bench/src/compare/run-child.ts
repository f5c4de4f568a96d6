import { execFile } from "node:child_process";
import { join } from "node:path";
import type { ChildResult, ChildSpec } from "./child.js";

/** Which tree a measurement ran on. */
export type Side = "base" | "new";

/**
 * Runs the child at `childPath` with `node --import tsx` from `treeRoot`'s bench workspace, so
 * tsx and every `@tenxgraph/*` import resolve inside that tree, and returns its totals.
 */
export function runChild(
  childPath: string,
  treeRoot: string,
  spec: ChildSpec,
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", childPath, JSON.stringify(spec)],
      { cwd: join(treeRoot, "bench"), maxBuffer: 1 << 20, timeout: 120_000 },
      (error, stdout, stderr) => {
        if (error) {
          reject(
            new Error(
              `compare child (${spec.store}) in ${treeRoot} failed: ${error.message}\n${stderr}`,
            ),
          );
          return;
        }
        const line = stdout.trim().split("\n").at(-1) ?? "";
        try {
          resolve(JSON.parse(line) as ChildResult);
        } catch {
          reject(new Error(`compare child (${spec.store}) printed no result: ${stdout}${stderr}`));
        }
      },
    );
  });
}
