import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = new URL("../../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "tenxgraph-pack-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// What a user gets from `npm pack`: built ESM with types, no tests, and no vitest needed.
describe("@tenxgraph/core as a packed package", () => {
  it("installs from its tarball and runs a graph from both entry points", async () => {
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", scratch], {
      cwd: join(root, "packages/core"),
    });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    const paths = packed!.files.map((f) => f.path);
    expect(paths).toContain("dist/index.js");
    expect(paths).toContain("dist/index.d.ts");
    expect(paths).toContain("dist/testing/index.js");
    expect(paths.filter((p) => /\.test\.|test-support/.test(p))).toEqual([]);

    const app = join(scratch, "app");
    await run("mkdir", ["-p", app]);
    writeFileSync(join(app, "package.json"), JSON.stringify({ type: "module", private: true }));
    await run(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund", join(scratch, packed!.filename)],
      { cwd: app, timeout: 120_000 },
    );
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
