import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { createServer, type ViteDevServer } from "vite";
import { afterAll, beforeAll, expect } from "vitest";
import { launchBrowser } from "../../inspector/support/browser.js";
import { CliProcess } from "./cli-process.js";

const root = new URL("../../../", import.meta.url).pathname;

/** The example agent's first answer: long enough that its words are seen arriving. */
export const HELLO_TEXT =
  "Hello! I can refund an order (say: refund order 42) or email its receipt (say: receipt for order 42).";

/** What a browser test of an example page holds once `beforeAll` has run. */
export interface ExamplePage {
  api: CliProcess;
  browser: Browser;
  /** The Vite dev server's page. */
  url: string;
}

/**
 * An example's Vite page (`examples/<example>`) against `tenxgraph api` serving
 * examples/chat-ui's agent, with a headless Chromium; started in `beforeAll` and stopped in
 * `afterAll` of the calling `describe`. The page finds the API through `apiUrlVariable`.
 */
export function exampleUnderTest(options: {
  example: string;
  apiUrlVariable: string;
  /** More of the API's environment (a queue's DSN). */
  env?: () => Promise<Record<string, string>>;
}): ExamplePage {
  const dir = mkdtempSync(join(tmpdir(), `tenxgraph-${options.example}-`));
  const held = {} as ExamplePage;
  let vite: ViteDevServer | undefined;
  beforeAll(async () => {
    held.api = new CliProcess(
      ["api", "--config", "examples/chat-ui/tenxgraph.json", "--port", "0", "--no-inspector"],
      {
        cwd: root,
        env: {
          TENXGRAPH_DB: join(dir, "chat.db"),
          // Slow enough that a test sees words arrive and can reload mid-receipt.
          CHAT_UI_WORD_MS: "80",
          CHAT_UI_RECEIPT_MS: "3000",
          ...(await options.env?.()),
        },
      },
    );
    process.env[options.apiUrlVariable] = await held.api.url();
    vite = await createServer({
      configFile: join(root, `examples/${options.example}/vite.config.ts`),
      server: { host: "127.0.0.1", port: 0 },
      logLevel: "error",
    });
    await vite.listen();
    held.url = vite.resolvedUrls!.local[0]!;
    held.browser = await launchBrowser();
  }, 90_000);
  afterAll(async () => {
    await held.browser?.close();
    await vite?.close();
    await held.api?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return held;
}

/** Types `text` into the page's message box and sends it. */
export async function sendMessage(page: Page, text: string): Promise<void> {
  await page.getByLabel("Message").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

/** Waits until `text` is whole in `locator`, and checks it was seen part-way first (streamed). */
export async function expectStreamedText(locator: Locator, text: string): Promise<void> {
  const seen = new Set<string>();
  await expect
    .poll(
      async () => {
        seen.add((await locator.textContent().catch(() => "")) ?? "");
        return seen.has(text);
      },
      { timeout: 20_000, interval: 30 },
    )
    .toBe(true);
  expect([...seen].some((part) => part.length > 0 && part.length < text.length)).toBe(true);
}
