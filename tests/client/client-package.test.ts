import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { build } from "vite";
import { afterAll, describe, expect, it } from "vitest";
import { startClientServer } from "./support/client-server.js";

const run = promisify(execFile);
const folder = new URL("../../packages/client/", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "tenxgraph-client-pack-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// What a user gets from `npm pack`: built ESM with types, a README, nothing else to install.
describe("@tenxgraph/client as a packed package", () => {
  it("has no dependencies, installs from its tarball alone and talks to a real server", async () => {
    const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8"));
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", scratch], {
      cwd: folder,
    });
    const packed = (JSON.parse(stdout) as { filename: string; files: { path: string }[] }[])[0]!;
    const paths = packed.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining(["dist/index.js", "dist/index.d.ts", "README.md", "package.json"]),
    );
    expect(paths.filter((p) => /\.test\.|\/src\//.test(p))).toEqual([]);

    const app = join(scratch, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ type: "module", private: true }));
    await run(
      "npm",
      ["install", "--offline", "--no-audit", "--no-fund", join(scratch, packed.filename)],
      { cwd: app },
    );
    // Nothing but the client itself (npm's own `.package-lock.json` aside).
    const installed = readdirSync(join(app, "node_modules")).filter((n) => !n.startsWith("."));
    expect(installed).toEqual(["@tenxgraph"]);
    expect(readdirSync(join(app, "node_modules", "@tenxgraph"))).toEqual(["client"]);
    writeFileSync(
      join(app, "main.js"),
      `// In Node.js the client sends over node:http, never through fetch.
       globalThis.fetch = () => { throw new Error("fetch used"); };
       import { TenxgraphClient, isClientError } from "@tenxgraph/client";
       import manifest from "@tenxgraph/client/package.json" with { type: "json" };
       const client = new TenxgraphClient({ baseUrl: process.argv[2] });
       const pong = await client.ping();
       const error = await client.listThreads().catch((e) => e);
       console.log(manifest.name, pong, error.name, error.status, isClientError(error, "MISSING_TOKEN"));`,
    );
    const server = await startClientServer("sqlite", "client_package");
    try {
      const out = await run("node", ["main.js", server.url], { cwd: app });
      expect(out.stdout.trim()).toBe("@tenxgraph/client pong AuthenticationError 401 true");
    } finally {
      await server.close();
    }

    // A browser bundle of it takes the fetch sender and holds no node:http.
    writeFileSync(
      join(app, "page.js"),
      `import { TenxgraphClient } from "@tenxgraph/client";
       export const client = new TenxgraphClient({ baseUrl: location.origin });`,
    );
    const bundled = (await build({
      root: app,
      configFile: false,
      logLevel: "silent",
      build: { write: false, lib: { entry: join(app, "page.js"), formats: ["es"] } },
    })) as { output: { type: string; code?: string }[] }[];
    const code = bundled.flatMap((b) => b.output.map((o) => o.code ?? "")).join("\n");
    expect(code).toContain("globalThis.fetch.bind(globalThis)");
    expect(code).not.toMatch(/node:https?|keepAlive/);
  }, 180_000);
});
