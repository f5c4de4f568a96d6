import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshDatabase } from "@tenxgraph/test-servers/vitest";
import type { Browser, Page } from "playwright-core";
import { createServer, type ViteDevServer } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, newPage, screenshot } from "../../inspector/support/browser.js";
import { CliProcess } from "../support/cli-process.js";

const root = new URL("../../../", import.meta.url).pathname;

/**
 * examples/langgraph-ui (a Vite page with LangGraph's `useStream`) in headless Chromium, against
 * `tenxgraph api` serving examples/chat-ui's agent with a queue for its runs: see the words
 * stream, approve a refund (an interrupt), reload mid-run and see the page rejoin the run.
 */
describe("the useStream example page in Chromium", { timeout: 90_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-langgraph-ui-"));
  let api: CliProcess;
  let vite: ViteDevServer;
  let browser: Browser;
  let url: string;

  beforeAll(async () => {
    api = new CliProcess(
      ["api", "--config", "examples/chat-ui/tenxgraph.json", "--port", "0", "--no-inspector"],
      {
        cwd: root,
        env: {
          TENXGRAPH_DB: join(dir, "chat.db"),
          TENXGRAPH_RUNS_DSN: await freshDatabase("langgraph_ui"),
          CHAT_UI_WORD_MS: "80",
          CHAT_UI_RECEIPT_MS: "3000",
        },
      },
    );
    process.env.LANGGRAPH_UI_API = await api.url();
    vite = await createServer({
      configFile: join(root, "examples/langgraph-ui/vite.config.ts"),
      server: { host: "127.0.0.1", port: 0 },
      logLevel: "error",
    });
    await vite.listen();
    url = vite.resolvedUrls!.local[0]!;
    browser = await launchBrowser();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await vite?.close();
    await api?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const lastAgentText = (page: Page) => page.locator('[data-role="ai"] .text').last();
  const send = async (page: Page, text: string) => {
    await page.getByLabel("Message").fill(text);
    await page.getByRole("button", { name: "Send" }).click();
  };

  it("streams the words, answers an interrupt, and rejoins a run across a reload", async () => {
    const { page, errors } = await newPage(browser);
    try {
      await page.goto(url);
      await expect.poll(() => page.getByTestId("status").textContent()).toBe("ready");

      // Words arrive one by one: the text is seen part-way before it is whole.
      await send(page, "hello");
      const hello =
        "Hello! I can refund an order (say: refund order 42) or email its receipt (say: receipt for order 42).";
      const seen = new Set<string>();
      await expect
        .poll(
          async () => {
            seen.add(
              (await lastAgentText(page)
                .textContent()
                .catch(() => "")) ?? "",
            );
            return seen.has(hello);
          },
          { timeout: 20_000, interval: 30 },
        )
        .toBe(true);
      expect([...seen].some((text) => text.length > 0 && text.length < hello.length)).toBe(true);

      await send(page, "refund order 42");
      await page
        .getByTestId("interrupt")
        .getByRole("button", { name: "Approve" })
        .click({ timeout: 20_000 });
      await expect
        .poll(() => lastAgentText(page).textContent(), { timeout: 20_000 })
        .toBe("Order 42: Refunded 42 USD. Anything else?");
      expect(api.output.match(/refunded order 42/g)).toHaveLength(1);

      // Reloaded while the receipt is being sent: the page rejoins the same run, still live.
      await send(page, "receipt for order 43");
      await expect.poll(() => page.getByTestId("status").textContent()).toBe("streaming");
      await page.waitForTimeout(300);
      await page.reload();
      await expect
        .poll(() => page.getByTestId("status").textContent(), { timeout: 10_000 })
        .toBe("streaming");
      await expect
        .poll(() => lastAgentText(page).textContent(), { timeout: 20_000 })
        .toBe("Order 43: Receipt sent. Anything else?");
      await expect.poll(() => page.getByTestId("status").textContent()).toBe("ready");
      expect(api.output.match(/sent the receipt for order 43/g)).toHaveLength(1);
      await screenshot(page, "langgraph-ui");
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  });
});
