import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { FakeOpenAIServer } from "../../packages/models/src/support/fake-openai-server.js";
import { streamedReply } from "../../packages/models/src/support/openai-replies.js";
import { freshDatabase, testRedisUrl } from "@tenxgraph/test-servers/vitest";

const root = new URL("../../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "tenxgraph-readme-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A package README's first TypeScript block (its example) and the block after "Output:". */
function example(folder: string): { code: string; output: string | null } {
  const text = readFileSync(join(root, "packages", folder, "README.md"), "utf8");
  const code = /```ts\n([\s\S]*?)```/.exec(text)?.[1];
  if (!code) throw new Error(`packages/${folder}/README.md has no TypeScript example`);
  const rest = text.slice(text.indexOf(code) + code.length);
  const output = /^```\n\nOutput[^:\n]*:\n\n```\n([\s\S]*?)```/.exec(rest)?.[1];
  return { code, output: output ?? null };
}

/**
 * Runs a README example as a user would after `npm install`: with tsx, importing the built
 * packages (dist/ is built by the global setup). The file sits in the repository so the
 * `@tenxgraph/*` imports resolve; it runs in a scratch folder so the files it writes land there.
 */
async function run(folder: string, env: Record<string, string> = {}): Promise<string> {
  const file = join(root, "tests/readme", `.readme-${folder}-${process.pid}.ts`);
  writeFileSync(file, example(folder).code);
  try {
    const { stdout } = await promisify(execFile)(join(root, "node_modules/.bin/tsx"), [file], {
      cwd: scratch,
      env: { ...process.env, ...env },
      timeout: 120_000,
    });
    return stdout;
  } finally {
    rmSync(file, { force: true });
  }
}

// Each package README's example runs against the current API and prints what the README says.
describe("package READMEs", () => {
  it("core: a tool call runs once and is in the ledger", async () => {
    expect(await run("core")).toBe(example("core").output);
  }, 120_000);

  it("sqlite: the thread is on disk, and a second process continues it", async () => {
    expect(await run("sqlite")).toBe(example("sqlite").output);
    expect(await run("sqlite")).toBe("version 4: 4 messages on disk\n");
  }, 120_000);

  it("postgres: the thread is in PostgreSQL, with Redis in front", async () => {
    const env = { DATABASE_URL: await freshDatabase("readme"), REDIS_URL: testRedisUrl() };
    expect(await run("postgres", env)).toBe(example("postgres").output);
  }, 120_000);

  it("models: createReactAgent on gpt-4o-mini (an OpenAI-compatible server on 127.0.0.1)", async () => {
    const server = await FakeOpenAIServer.start([
      streamedReply({
        toolCalls: [
          {
            id: "call_1",
            name: "charge_card",
            argumentChunks: ['{"order_id":"4821",', '"amount_cents":4200}'],
          },
        ],
      }),
      streamedReply({ text: ["Order 4821 is ", "charged."] }),
    ]);
    try {
      const stdout = await run("models", {
        OPENAI_BASE_URL: server.baseURL,
        OPENAI_API_KEY: "sk-readme",
      });
      expect(stdout).toBe("completed | Order 4821 is charged.\n");
      expect(server.requests).toHaveLength(2);
      expect(JSON.stringify(server.requests[1]!.body)).toContain("Charged 42 USD for order 4821");
    } finally {
      await server.close();
    }
  }, 120_000);

  it("langchain: a LangChain chat model and LangChain messages in a ReAct agent", async () => {
    expect(await run("langchain")).toBe(example("langchain").output);
  }, 120_000);

  it("server: serves the graph and answers an invoke", async () => {
    expect(await run("server", { PORT: "0" })).toBe(example("server").output);
  }, 120_000);

  it("client: invokes a served graph", async () => {
    expect(await run("client")).toBe(example("client").output);
  }, 120_000);
});
