import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CliProcess } from "./support/cli-process.js";
import { caller, TEST_JWT_SECRET, tokenFor, userMessage } from "./support/http.js";

const root = new URL("../../", import.meta.url).pathname;
// Inside the repository (ignored by git), so the project's imports resolve to the workspace.
mkdirSync(join(root, ".tenxgraph"), { recursive: true });
const dir = mkdtempSync(join(root, ".tenxgraph", "store-project-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A project whose `store` names a SqliteStore; its graph is a StateGraph, compiled with it. */
function writeProject(): void {
  writeFileSync(
    join(dir, "tenxgraph.json"),
    JSON.stringify({
      agent: "./graph.mjs:graph",
      checkpointer: "./stores.mjs:checkpointer",
      store: "./stores.mjs:store",
      auth: "jwt",
    }),
  );
  writeFileSync(
    join(dir, "stores.mjs"),
    `import { SqliteCheckpointer, SqliteStore } from "@tenxgraph/sqlite";
     export const checkpointer = new SqliteCheckpointer({ path: "./data.db" });
     export const store = new SqliteStore({ path: "./data.db" });`,
  );
  writeFileSync(
    join(dir, "graph.mjs"),
    `import { END, Message, StateGraph } from "@tenxgraph/core";
     import { userNamespace } from "@tenxgraph/core/store";
     export const graph = new StateGraph()
       .addNode("MAIN", async (state, ctx) => {
         const text = Message.text(state.messages.at(-1));
         await ctx.store.put(userNamespace(ctx.userId, "notes"), "last", { text });
         return Message.assistant("noted");
       })
       .addEdge("MAIN", END)
       .setEntryPoint("MAIN");`,
  );
}

describe("tenxgraph.json naming a SqliteStore as its store", () => {
  it("compiles the graph with it, serves it, and keeps it across a restart", async () => {
    writeProject();
    const token = await tokenFor("alice");
    const env = { JWT_SECRET_KEY: TEST_JWT_SECRET };
    const first = new CliProcess(["api", "--port", "0"], { cwd: dir, env });
    try {
      const call = caller(await first.url(), token);
      const ran = await call("POST", "/v1/graph/invoke", {
        messages: [userMessage("buy milk")],
        config: { thread_id: "t-notes" },
      });
      expect(ran.status).toBe(200);
    } finally {
      await first.stop();
    }
    const second = new CliProcess(["api", "--port", "0"], { cwd: dir, env });
    try {
      const call = caller(await second.url(), token);
      const got = await call("GET", "/v1/store/items?namespace=notes&key=last");
      expect(got.body.data.item).toMatchObject({ value: { text: "buy milk" } });
      const bob = caller(await second.url(), await tokenFor("bob"));
      expect((await bob("GET", "/v1/store/items?namespace=notes&key=last")).body.data.item).toBe(
        null,
      );
    } finally {
      await second.stop();
    }
  });
});
