import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The workspaces a compare child imports, and what they build on (the server's wire types come
 * from @tenxgraph/client); nothing else is built in either tree.
 */
export const COMPARE_WORKSPACES = [
  "@tenxgraph/client",
  "@tenxgraph/core",
  "@tenxgraph/sqlite",
  "@tenxgraph/postgres",
  "@tenxgraph/server",
];

/** A checkout of the base commit with its own install and builds. */
export interface BaseTree {
  sha: string;
  root: string;
  /** Removes the worktree, unless it is kept for the next compare. */
  release(): void;
}

/**
 * The accepted baseline: the first line of `bench/baseline-ref` that is not a comment. Moving
 * it is a commit of its own that says why.
 */
export function readBaselineRef(repoRoot: string): string {
  const text = readFileSync(join(repoRoot, "bench", "baseline-ref"), "utf8");
  const ref = text
    .split("\n")
    .map((line) => line.trim())
    .find((line) => line !== "" && !line.startsWith("#"));
  if (!ref) throw new Error("bench/baseline-ref names no commit");
  return ref;
}

/** The full sha of `ref` in the repository at `repoRoot`, or a clear error. */
export function resolveCommit(repoRoot: string, ref: string): string {
  try {
    return git(repoRoot, ["rev-parse", "--verify", `${ref}^{commit}`]).trim();
  } catch {
    throw new Error(`--base ${ref}: not a commit in this repository (a shallow clone? fetch it)`);
  }
}

/**
 * A detached worktree of `sha` in the temp directory, installed (`npm ci`, offline when the
 * cache allows) and with the compare workspaces built. Each compare gets a folder of its own,
 * removed when it ends (or the process exits), so compares running at once on one base do not
 * delete each other's trees. With `keep`, the tree sits in the one folder of that base: one an
 * earlier compare left ready is reused, and this one is left for the next.
 */
export function prepareBaseTree(repoRoot: string, sha: string, keep: boolean): BaseTree {
  const name = `tenxgraph-compare-${sha.slice(0, 12)}`;
  const root = keep ? join(tmpdir(), name) : mkdtempSync(join(tmpdir(), `${name}-`));
  const ready = join(root, ".compare-ready");
  let released = false;
  const release = () => {
    if (keep || released) return;
    released = true;
    process.off("exit", release);
    try {
      git(repoRoot, ["worktree", "remove", "--force", root]);
    } catch {
      rmSync(root, { recursive: true, force: true });
      git(repoRoot, ["worktree", "prune"]);
    }
  };
  if (keep && existsSync(ready)) {
    log(`base ${sha.slice(0, 12)}: reusing ${root}`);
    return { sha, root, release };
  }
  if (keep && existsSync(root)) {
    rmSync(root, { recursive: true, force: true });
    git(repoRoot, ["worktree", "prune"]);
  }
  // Also when the compare is cut short: an exit by error or by signal (see compare.ts).
  process.on("exit", release);
  log(`base ${sha.slice(0, 12)}: worktree in ${root}, npm ci, build`);
  // `git worktree add` wants the folder absent or empty; the fresh temp folder is empty.
  git(repoRoot, ["worktree", "add", "--detach", root, sha]);
  try {
    run(root, "npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund"]);
    buildWorkspaces(root);
    writeFileSync(ready, `${sha}\n`);
  } catch (error) {
    release();
    throw error;
  }
  return { sha, root, release };
}

/** Builds the compare workspaces of the tree at `root`. */
export function buildWorkspaces(root: string): void {
  run(root, "npm", ["run", "build", ...COMPARE_WORKSPACES.flatMap((w) => ["--workspace", w])]);
}

function git(cwd: string, args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** Runs a setup command; its output goes to stderr so stdout keeps only the report. */
function run(cwd: string, command: string, args: string[]): void {
  execFileSync(command, args, { cwd, stdio: ["ignore", process.stderr, process.stderr] });
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}
