import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { freshDatabase, testRedisUrl } from "@tenxgraph/test-servers/vitest";
import { FakeOpenAIServer } from "../../packages/models/src/support/fake-openai-server.js";
import { streamedReply } from "../../packages/models/src/support/openai-replies.js";
import { allDocBlocks, blockName, ROOT, type DocBlock } from "./doc-blocks.js";

const scratch = mkdtempSync(join(tmpdir(), "tenxgraph-doc-programs-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * README.md's first block (examples/support-agent.ts) and each package README's first block
 * run in readme-example.test.ts and package-readmes.test.ts, with what they need (a crash, a
 * second process, a scripted model): not again here.
 */
function runElsewhere(block: DocBlock, blocks: DocBlock[]): boolean {
  const first = blocks.find((b) => b.page === block.page) === block;
  return first && (block.page === "README.md" || /^packages\/[^/]+\/README\.md$/.test(block.page));
}

/**
 * What a program may need, by what it names: a model on an OpenAI-compatible server on
 * 127.0.0.1 (one reply to every request), a fresh PostgreSQL database, the test Redis.
 */
async function environment(
  code: string,
): Promise<{ env: Record<string, string>; close(): Promise<void> }> {
  const env: Record<string, string> = {};
  let model: FakeOpenAIServer | null = null;
  if (code.includes('"openai/')) {
    model = await FakeOpenAIServer.start(() =>
      streamedReply({ text: ["Order 4821 ", "left the warehouse today."] }),
    );
    Object.assign(env, { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: "sk-docs" });
  }
  if (code.includes("DATABASE_URL")) env.DATABASE_URL = await freshDatabase("doc_program");
  if (code.includes("REDIS_URL")) env.REDIS_URL = testRedisUrl();
  return { env, close: async () => model?.close() };
}

/**
 * Runs a program as a user would after `npm install`: with tsx, on the built packages. The file
 * sits in the repository so `@tenxgraph/*` resolve; it runs in a scratch folder, so the files it
 * writes land there.
 */
async function run(block: DocBlock): Promise<string> {
  const slug = `${block.page.replace(/[/.]/g, "_")}_${block.line}`;
  const file = join(ROOT, "tests/readme", `.readme-doc-${slug}-${process.pid}.ts`);
  writeFileSync(file, block.code);
  const { env, close } = await environment(block.code);
  try {
    const { stdout } = await promisify(execFile)(join(ROOT, "node_modules/.bin/tsx"), [file], {
      cwd: scratch,
      env: { ...process.env, ...env },
      timeout: 60_000,
    });
    return stdout;
  } finally {
    rmSync(file, { force: true });
    await close();
  }
}

const blocks = allDocBlocks();
const programs = blocks.filter((b) => b.kind === "program" && !runElsewhere(b, blocks));

// Every whole program in the docs runs as written, and prints what its page shows.
describe("programs in the docs", () => {
  it("has programs to run", () => {
    expect(programs.length).toBeGreaterThan(0);
  });

  it.each(programs.map((b) => [blockName(b), b] as const))(
    "%s runs",
    async (_name, block) => {
      const stdout = await run(block);
      if (block.output !== null) expect(stdout).toBe(block.output);
    },
    90_000,
  );
});
