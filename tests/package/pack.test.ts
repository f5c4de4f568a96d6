import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { testPostgresDsn, testRedisUrl } from "@tenxgraph/test-servers/vitest";
import { freshSchema } from "../../packages/postgres/src/support/pg-store.js";

const run = promisify(execFile);
const root = new URL("../../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "tenxgraph-pack-"));
// Four installed apps with their node_modules: deleting them takes a while on a busy machine.
afterAll(() => rmSync(scratch, { recursive: true, force: true }), 120_000);

interface Packed {
  filename: string;
  files: { path: string }[];
}

/** `npm pack` of one workspace package into the scratch folder. */
async function pack(folder: string): Promise<Packed> {
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", scratch], {
    cwd: join(root, folder),
  });
  return (JSON.parse(stdout) as Packed[])[0]!;
}

/** An empty ESM app with `tarballs` installed from the registry's dependencies, as a user would. */
async function appWith(name: string, tarballs: Packed[], timeout: number): Promise<string> {
  const app = join(scratch, name);
  await run("mkdir", ["-p", app]);
  writeFileSync(join(app, "package.json"), JSON.stringify({ type: "module", private: true }));
  const files = tarballs.map((packed) => join(scratch, packed.filename));
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...files], {
    cwd: app,
    timeout,
  });
  return app;
}

/**
 * A folder holding better-sqlite3's prebuild for this Node.js, made from the repository's own
 * build, in the name and layout prebuild-install looks for (its `local-prebuilds` option).
 */
async function localPrebuilds(): Promise<string> {
  const moduleDir = join(root, "node_modules/better-sqlite3");
  const { version } = JSON.parse(readFileSync(join(moduleDir, "package.json"), "utf8")) as {
    version: string;
  };
  const folder = join(scratch, "prebuilds");
  await run("mkdir", ["-p", folder]);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run("tar", [
    "-czf",
    join(folder, name),
    "-C",
    moduleDir,
    "build/Release/better_sqlite3.node",
  ]);
  return folder;
}

// What a user gets from `npm pack`: built ESM with types, no tests, and no vitest needed.
describe("@tenxgraph/core as a packed package", () => {
  it("installs from its tarball and runs a graph from both entry points", async () => {
    const packed = await pack("packages/core");
    const paths = packed.files.map((f) => f.path);
    expect(paths).toContain("dist/index.js");
    expect(paths).toContain("dist/index.d.ts");
    expect(paths).toContain("dist/testing/index.js");
    expect(paths.filter((p) => /\.test\.|(^|\/)support\//.test(p))).toEqual([]);

    const app = await appWith("core-app", [packed], 120_000);
    expect(readdirSync(join(app, "node_modules"))).not.toContain("vitest");
    writeFileSync(
      join(app, "main.js"),
      `import { StateGraph, END, Message } from "@tenxgraph/core";
       import { ScriptedModel } from "@tenxgraph/core/testing";
       const app = new StateGraph().addNode("MAIN", new ScriptedModel(["hello"]))
         .addEdge("MAIN", END).setEntryPoint("MAIN").compile();
       const r = await app.invoke({ messages: [Message.user("hi")] }, { threadId: "t" });
       console.log(r.status, Message.text(r.state.messages.at(-1)));`,
    );
    const out = await run("node", ["main.js"], { cwd: app });
    expect(out.stdout.trim()).toBe("completed hello");
  }, 180_000);
});

describe("@tenxgraph/sqlite as a packed package", () => {
  it("installs beside core (better-sqlite3 built on install) and keeps a thread on disk across processes", async () => {
    const packed = await pack("packages/sqlite");
    const paths = packed.files.map((f) => f.path);
    expect(paths).toContain("dist/index.js");
    expect(paths).toContain("dist/index.d.ts");
    expect(paths.filter((p) => /\.test\./.test(p))).toEqual([]);

    const app = await appWith("sqlite-app", [await pack("packages/core"), packed], 600_000);
    writeFileSync(
      join(app, "main.js"),
      `import { StateGraph, END, Message } from "@tenxgraph/core";
       import { SqliteCheckpointer } from "@tenxgraph/sqlite";
       const checkpointer = new SqliteCheckpointer(); // ./.tenxgraph/threads.db
       const app = new StateGraph().addNode("MAIN", () => Message.assistant("noted"))
         .addEdge("MAIN", END).setEntryPoint("MAIN").compile({ checkpointer });
       await app.invoke({ messages: [Message.user(process.argv[2])] }, { threadId: "t" });
       const state = await app.getState({ threadId: "t" });
       console.log(state.version, state.values.messages.map((m) => Message.text(m)).join(","));
       await checkpointer.close();`,
    );
    expect((await run("node", ["main.js", "one"], { cwd: app })).stdout.trim()).toBe("2 one,noted");
    expect((await run("node", ["main.js", "two"], { cwd: app })).stdout.trim()).toBe(
      "4 one,noted,two,noted",
    );
  }, 660_000);
});

describe("@tenxgraph/postgres as a packed package", () => {
  it("installs beside core and keeps a thread in PostgreSQL (Redis in front) across processes", async () => {
    const packed = await pack("packages/postgres");
    const paths = packed.files.map((f) => f.path);
    expect(paths).toContain("dist/index.js");
    expect(paths).toContain("dist/index.d.ts");
    expect(paths.filter((p) => /\.test\./.test(p))).toEqual([]);

    const app = await appWith("postgres-app", [await pack("packages/core"), packed], 300_000);
    writeFileSync(
      join(app, "main.js"),
      `import { StateGraph, END, Message } from "@tenxgraph/core";
       import { PgCheckpointer } from "@tenxgraph/postgres";
       const [dsn, redisUrl, schema, text] = process.argv.slice(2);
       const checkpointer = new PgCheckpointer({ postgresDsn: dsn, redisUrl, schema });
       const app = new StateGraph().addNode("MAIN", () => Message.assistant("noted"))
         .addEdge("MAIN", END).setEntryPoint("MAIN").compile({ checkpointer });
       await app.invoke({ messages: [Message.user(text)] }, { threadId: "t" });
       const state = await app.getState({ threadId: "t" });
       console.log(state.version, state.values.messages.map((m) => Message.text(m)).join(","));
       await checkpointer.close();`,
    );
    const schema = freshSchema("packed");
    const main = (text: string) =>
      run("node", ["main.js", testPostgresDsn(), testRedisUrl(), schema, text], { cwd: app });
    expect((await main("one")).stdout.trim()).toBe("2 one,noted");
    expect((await main("two")).stdout.trim()).toBe("4 one,noted,two,noted");
  }, 360_000);
});

describe("@tenxgraph/server as a packed package", () => {
  it("makes a project with `tenxgraph init --from` that installs from `npm run pack`'s tarballs, passes its test and serves", async () => {
    const packed = await pack("packages/server");
    const paths = packed.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "bin/tenxgraph.js",
        "dist/index.js",
        "dist/cli/main.js",
        // The inspector ships prebuilt: users need no build step.
        "dist/inspector/index.html",
      ]),
    );
    expect(paths.filter((p) => /\.test\./.test(p))).toEqual([]);

    // The route the README gives until the packages are on the registry: the release tarballs
    // of every package in one folder, and a project that installs from copies of them.
    const packs = join(scratch, "packs");
    await run("npm", ["run", "pack", "--", "--out", packs, "--no-build"], { cwd: root });
    const app = join(scratch, "served-app");
    await run(
      "node",
      [join(root, "packages/server/bin/tenxgraph.js"), "init", app, "--from", packs],
      {
        cwd: scratch,
      },
    );
    // Plain `npm install`: every @tenxgraph package, the server's own included, comes from the
    // project's vendor/ folder, never from the registry. better-sqlite3's install takes its
    // binary from a local prebuild, as a user's machine downloads one: the test above already
    // proves the build from source, which costs a minute on two cores.
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], {
      cwd: app,
      timeout: 600_000,
      env: { ...process.env, npm_config_better_sqlite3_local_prebuilds: await localPrebuilds() },
    });
    const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      overrides: Record<string, string>;
    };
    expect(manifest.dependencies["@tenxgraph/server"]).toMatch(/^file:vendor\/tenxgraph\//);
    expect(Object.keys(manifest.overrides).sort()).toEqual(
      ["client", "core", "postgres", "server", "sqlite"].map((n) => `@tenxgraph/${n}`),
    );
    // npm publish drops a bin it finds malformed: the command must survive packing.
    expect(existsSync(join(app, "node_modules/.bin/tenxgraph")), "the tenxgraph command").toBe(
      true,
    );
    for (const name of ["core", "server", "sqlite", "client", "postgres"]) {
      const installed = JSON.parse(
        readFileSync(join(app, "node_modules/@tenxgraph", name, "package.json"), "utf8"),
      ) as { version: string };
      expect(installed.version, name).toBe(packed.filename.match(/-(\d[^-]*)\.tgz$/)![1]);
    }
    await run("npm", ["test"], { cwd: app, timeout: 120_000 });

    // The installed bin itself (not through npx, which would not pass SIGTERM on).
    const bin = join(app, "node_modules/@tenxgraph/server/bin/tenxgraph.js");
    const server = spawn("node", [bin, "api", "--port", "0"], {
      cwd: app,
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise((resolve) => server.on("close", resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        server.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const found = /serving .* on (http:\/\/\S+)/.exec(out);
          if (found) resolve(found[1]!);
        });
        server.on("close", (code) => reject(new Error(`tenxgraph api exited (${code}): ${out}`)));
      });
      const response = await fetch(`${url}/v1/graph/invoke`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          messages: [{ role: "user", content: [{ type: "text", text: "charge order 99" }] }],
          config: { thread_id: "packed" },
        }),
      });
      const { data } = (await response.json()) as {
        data: { messages: { content: { text: string }[] }[] };
      };
      expect(data.messages.at(-1)!.content[0]!.text).toBe(
        "Order 99 is charged and the receipt is on its way.",
      );
      const inspector = await fetch(`${url}/inspector/`);
      expect(inspector.status).toBe(200);
      expect(await inspector.text()).toContain('<div id="app"></div>');
    } finally {
      server.kill("SIGTERM");
      await exited;
    }
  }, 900_000);
});
