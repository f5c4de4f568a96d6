import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { CliProcess } from "./support/cli-process.js";
import { caller, ndjson, userMessage } from "./support/http.js";

const root = new URL("../../", import.meta.url).pathname;
// Inside the repository (ignored by git), so the project's imports resolve to the workspace packages.
mkdirSync(join(root, ".tenxgraph"), { recursive: true });
const scratch = mkdtempSync(join(root, ".tenxgraph", "cli-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A project with a 10xgraph.json (no tenxgraph.json), .env, custom auth, a name generator and a checkpointer. */
function writeProject(dir: string, reply: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "10xgraph.json"),
    JSON.stringify({
      agent: "./graph.mjs:graph",
      checkpointer: "./store.mjs:checkpointer",
      env: ".env",
      auth: { method: "custom", path: "./auth.mjs:authenticate" },
      thread_name_generator: "./names.mjs:nameThread",
    }),
  );
  writeFileSync(join(dir, ".env"), "API_KEY=key-from-env\n");
  writeFileSync(
    join(dir, "auth.mjs"),
    `export const authenticate = (request) =>
       request.headers.get("x-api-key") === process.env.API_KEY ? { id: "alice" } : null;`,
  );
  writeFileSync(
    join(dir, "names.mjs"),
    `export const nameThread = (texts) => "about: " + texts.join(" ");`,
  );
  writeFileSync(
    join(dir, "store.mjs"),
    `import { SqliteCheckpointer } from "@tenxgraph/sqlite";
     export const checkpointer = new SqliteCheckpointer({ path: "./threads.db" });`,
  );
  writeGraph(dir, reply);
}

/** The graph answers `reply`, after waiting for a file named "gate" when "wait" is said. */
function writeGraph(dir: string, reply: string): void {
  writeFileSync(
    join(dir, "graph.mjs"),
    `import { existsSync } from "node:fs";
     import { setTimeout as sleep } from "node:timers/promises";
     import { END, Message, StateGraph } from "@tenxgraph/core";
     export const graph = new StateGraph()
       .addNode("MAIN", async (state) => {
         if (Message.text(state.messages.at(-1)).includes("wait")) while (!existsSync("gate")) await sleep(20);
         return Message.assistant(${JSON.stringify(reply)});
       })
       .addEdge("MAIN", END)
       .setEntryPoint("MAIN");`,
  );
}

const ask = (text: string, threadId: string) => ({
  messages: [userMessage(text)],
  config: { thread_id: threadId },
});

describe("tenxgraph api", () => {
  it("serves examples/server/tenxgraph.json from the repository root, and stops on SIGTERM", async () => {
    const cli = new CliProcess(
      ["api", "--config", "examples/server/tenxgraph.json", "--port", "0"],
      {
        cwd: root,
        env: { TENXGRAPH_DB: join(scratch, "example.db") },
      },
    );
    try {
      const call = caller(await cli.url());
      const r = await call("POST", "/v1/graph/invoke", ask("charge order 4821", "example"));
      expect(r.status).toBe(200);
      expect(r.body.data.messages.at(-1).content[0].text).toBe(
        "Order 4821 is charged and the receipt is on its way.",
      );
      const inspector = await fetch(`${await cli.url()}/inspector/`);
      expect(inspector.status).toBe(200);
      expect(await inspector.text()).toContain('<div id="app"></div>');
    } finally {
      expect(await cli.stop()).toBe(0);
    }
    expect(cli.output).toMatch(/outside world: payment provider: charged order 4821/);
  });

  it("serves no inspector with --no-inspector", async () => {
    const cli = new CliProcess(
      ["api", "--config", "examples/server/tenxgraph.json", "--port", "0", "--no-inspector"],
      { cwd: root, env: { TENXGRAPH_DB: join(scratch, "no-inspector.db") } },
    );
    try {
      const url = await cli.url();
      expect((await fetch(`${url}/inspector/`)).status).toBe(404);
      expect((await fetch(`${url}/ping`)).status).toBe(200);
    } finally {
      expect(await cli.stop()).toBe(0);
    }
    expect(cli.output).not.toMatch(/inspector at/);
  });

  it("tells the inspector where trace ids link with --trace-url", async () => {
    const template = "http://localhost:16686/trace/{traceId}";
    const cli = new CliProcess(
      ["api", "--config", "examples/server/tenxgraph.json", "--port", "0", "--trace-url", template],
      { cwd: root, env: { TENXGRAPH_DB: join(scratch, "trace-url.db") } },
    );
    try {
      const settings = await fetch(`${await cli.url()}/inspector/settings.json`);
      expect(await settings.json()).toEqual({ trace_url: template });
    } finally {
      expect(await cli.stop()).toBe(0);
    }
  });

  it("finds 10xgraph.json, loads .env, custom auth, the checkpointer and the name generator; lets a stream end on SIGTERM", async () => {
    const dir = join(scratch, "project");
    writeProject(dir, "hello from v1");
    const cli = new CliProcess(["api", "--port", "0"], { cwd: dir });
    const base = await cli.url();
    expect((await caller(base)("GET", "/v1/threads")).status).toBe(401);
    const call = caller(base);
    const key = { "x-api-key": "key-from-env" };
    const r = await call("POST", "/v1/graph/invoke", ask("hi there", "t1"), key);
    expect(r.body.data.meta).toMatchObject({ is_new_thread: true, thread_name: "about: hi there" });
    expect(r.body.data.messages.at(-1).content[0].text).toBe("hello from v1");
    expect(existsSync(join(dir, "threads.db"))).toBe(true);

    const streaming = call("POST", "/v1/graph/stream", ask("wait for it", "t2"), key);
    while ((await call("GET", "/v1/threads/t2/state", undefined, key)).body.data.state === null) {
      await sleep(20);
    }
    cli.child.kill("SIGTERM");
    await cli.waitFor(/SIGTERM: finishing requests in progress/);
    writeFileSync(join(dir, "gate"), "");
    const chunks = ndjson((await streaming).text);
    const answer = chunks.filter((c) => c.event === "message").at(-1);
    expect(answer.message.content[0].text).toBe("hello from v1");
    // A new thread with a name generator ends with the name, as 10xGraph streams do.
    expect(chunks.at(-1)).toMatchObject({
      event: "updates",
      metadata: { thread_name: "about: wait for it" },
    });
    expect(await cli.exited).toBe(0);
  });

  it("refuses a config file naming a missing export, with the reason", async () => {
    const dir = join(scratch, "broken");
    mkdirSync(dir);
    writeFileSync(join(dir, "tenxgraph.json"), JSON.stringify({ agent: "./graph.mjs:nope" }));
    writeFileSync(join(dir, "graph.mjs"), "export const app = 1;");
    const cli = new CliProcess(["api", "--port", "0"], { cwd: dir });
    expect(await cli.exited).toBe(1);
    expect(cli.output).toMatch(
      /agent '\.\/graph\.mjs:nope': the module has no export 'nope' \(it exports: app\)/,
    );
  });
});

describe("tenxgraph dev watches the agent's module graph", () => {
  it("restarts when the graph or a module it imports changes, never for files the agent or a log writes", async () => {
    const dir = join(scratch, "dev-graph");
    writeProject(dir, "unused");
    mkdirSync(join(dir, "lib"));
    const writeReply = (reply: string) =>
      writeFileSync(
        join(dir, "lib", "reply.mjs"),
        `export const reply = ${JSON.stringify(reply)};`,
      );
    writeReply("from lib one");
    writeFileSync(
      join(dir, "graph.mjs"),
      `import { appendFileSync } from "node:fs";
       import { END, Message, StateGraph } from "@tenxgraph/core";
       import { reply } from "./lib/reply.mjs";
       export const graph = new StateGraph()
         .addNode("MAIN", () => {
           appendFileSync("agent-notes.txt", "a run\\n"); // the agent writes into its folder
           return Message.assistant(reply);
         })
         .addEdge("MAIN", END)
         .setEntryPoint("MAIN");`,
    );
    const cli = new CliProcess(["dev", "--port", "0"], { cwd: dir });
    try {
      const key = { "x-api-key": "key-from-env" };
      const call = caller(await cli.url(1));
      const first = await call("POST", "/v1/graph/invoke", ask("hi", "g1"), key);
      expect(first.body.data.messages.at(-1).content[0].text).toBe("from lib one");
      // A log redirected into the folder, a module nobody imports, the agent's own file and
      // the database (written by the run above): none of them restarts the server.
      writeFileSync(join(dir, "dev.log"), "tenxgraph dev: serving\n");
      writeFileSync(join(dir, "unused.mjs"), "export const x = 1;");
      await call("POST", "/v1/graph/invoke", ask("again", "g2"), key);
      await sleep(600); // longer than the restart's 200 ms debounce
      expect(cli.output).not.toMatch(/changed, restarting/);

      writeReply("from lib two");
      await cli.waitFor(/lib\/reply\.mjs changed, restarting/);
      const second = await caller(await cli.url(2))(
        "POST",
        "/v1/graph/invoke",
        ask("hi", "g3"),
        key,
      );
      expect(second.body.data.messages.at(-1).content[0].text).toBe("from lib two");

      writeGraph(dir, "reply from the new graph");
      const third = await caller(await cli.url(3))(
        "POST",
        "/v1/graph/invoke",
        ask("hi", "g4"),
        key,
      );
      expect(third.body.data.messages.at(-1).content[0].text).toBe("reply from the new graph");
    } finally {
      expect(await cli.stop()).toBe(0);
    }
  });
});

describe("tenxgraph init", () => {
  it("writes a project: graph, tenxgraph.json, .env.example and a test", async () => {
    const dir = join(scratch, "new-app");
    const cli = new CliProcess(["init", dir], { cwd: scratch });
    expect(await cli.exited).toBe(0);
    for (const file of [
      "package.json",
      "graph.ts",
      "tenxgraph.json",
      ".env.example",
      "test/graph.test.ts",
    ]) {
      expect(existsSync(join(dir, file)), file).toBe(true);
    }
    const again = new CliProcess(["init", dir], { cwd: scratch });
    expect(await again.exited).toBe(1);
    expect(again.output).toMatch(/is not empty/);
  });
});

describe("tenxgraph --help", () => {
  it("answers --help on the command and on every subcommand, and names what it refuses", async () => {
    const out = async (args: string[]) => {
      const cli = new CliProcess(args, { cwd: scratch });
      return { code: await cli.exited, output: cli.output };
    };
    for (const args of [["--help"], ["-h"], ["help"], []]) {
      const { code, output } = await out(args);
      expect(code, args.join(" ")).toBe(0);
      expect(output).toMatch(/Usage: tenxgraph <command>/);
      for (const command of ["api", "worker", "dev", "init"]) expect(output).toContain(command);
    }
    for (const command of ["api", "worker", "dev", "init"]) {
      for (const args of [
        [command, "--help"],
        ["help", command],
      ]) {
        const { code, output } = await out(args);
        expect(code, args.join(" ")).toBe(0);
        expect(output).toContain(`tenxgraph ${command} [`);
      }
    }
    const unknown = await out(["serve"]);
    expect(unknown.code).toBe(1);
    expect(unknown.output).toMatch(/unknown command 'serve'/);
    // An option of another command is refused, not ignored.
    const misplaced = await out(["init", "x", "--port", "9"]);
    expect(misplaced.code).toBe(1);
    expect(misplaced.output).toMatch(/init: Unknown option '--port'/);
    expect(existsSync(join(scratch, "x"))).toBe(false);
  });

  it("init --from a folder without the tarballs writes nothing and says what is missing", async () => {
    const empty = join(scratch, "no-tarballs");
    mkdirSync(empty);
    const target = join(scratch, "from-nothing");
    const cli = new CliProcess(["init", target, "--from", empty], { cwd: scratch });
    expect(await cli.exited).toBe(1);
    expect(cli.output).toMatch(/has no tarball of @tenxgraph\/core/);
    expect(existsSync(target)).toBe(false);
  });
});
