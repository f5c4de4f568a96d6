import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findConfigFile, loadEnvFile, readConfigFile } from "./config.js";

const dir = mkdtempSync(join(tmpdir(), "tenxgraph-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("project config", () => {
  it("finds tenxgraph.json first and reads its keys", () => {
    writeFileSync(join(dir, "agentflow.json"), JSON.stringify({ agent: "./old.ts:app" }));
    writeFileSync(
      join(dir, "tenxgraph.json"),
      JSON.stringify({ agent: "./graph.ts:app", auth: "jwt", runs: { concurrency: 2 } }),
    );
    const path = findConfigFile(dir);
    expect(path).toBe(join(dir, "tenxgraph.json"));
    expect(readConfigFile(path)).toMatchObject({ agent: "./graph.ts:app", auth: "jwt" });
  });

  it("reads a langgraph.json: graphs, env, auth.path; the first graph is the default", () => {
    const sub = join(dir, "lg");
    mkdirSync(sub);
    writeFileSync(
      join(sub, "langgraph.json"),
      JSON.stringify({
        graphs: { chat: "./chat.ts:graph", research: "./research.ts:graph" },
        env: { TENXGRAPH_T3: "x" },
        auth: { path: "./auth.ts:auth" },
        dependencies: ["."],
      }),
    );
    const path = findConfigFile(sub);
    expect(path).toBe(join(sub, "langgraph.json"));
    expect(readConfigFile(path)).toMatchObject({
      agent: "./chat.ts:graph",
      graphs: { chat: "./chat.ts:graph", research: "./research.ts:graph" },
      env_vars: { TENXGRAPH_T3: "x" },
      auth: { method: "custom", path: "./auth.ts:auth" },
    });
    writeFileSync(join(sub, "langgraph.json"), JSON.stringify({ graphs: {} }));
    expect(() => readConfigFile(path)).toThrow(`${path}: graphs: name at least one graph`);
  });

  it("names the file and the key that is wrong", () => {
    const path = join(dir, "bad.json");
    writeFileSync(path, JSON.stringify({ agent: "./graph.ts:app", runs: { concurrency: 0 } }));
    expect(() => readConfigFile(path)).toThrow(`${path}: runs.concurrency:`);
    writeFileSync(path, "{ not json");
    expect(() => readConfigFile(path)).toThrow(`${path}: not valid JSON`);
  });

  it("loads a .env file without overriding what is set", () => {
    const path = join(dir, ".env");
    writeFileSync(path, 'export TENXGRAPH_T1="quoted"\nTENXGRAPH_T2=plain # note\n# c\n');
    process.env.TENXGRAPH_T2 = "set before";
    loadEnvFile(path);
    expect(process.env.TENXGRAPH_T1).toBe("quoted");
    expect(process.env.TENXGRAPH_T2).toBe("set before");
    delete process.env.TENXGRAPH_T1;
    delete process.env.TENXGRAPH_T2;
  });
});
