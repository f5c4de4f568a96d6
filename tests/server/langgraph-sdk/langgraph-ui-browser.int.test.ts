import { freshDatabase } from "@tenxgraph/test-servers/vitest";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { newPage, screenshot } from "../../inspector/support/browser.js";
import {
  HELLO_TEXT,
  exampleUnderTest,
  expectStreamedText,
  sendMessage,
} from "../support/example-page.js";

/**
 * examples/langgraph-ui (a Vite page with LangGraph's `useStream`) in headless Chromium, against
 * `tenxgraph api` serving examples/chat-ui's agent with a queue for its runs: see the words
 * stream, approve a refund (an interrupt), reload mid-run and see the page rejoin the run.
 */
describe("the useStream example page in Chromium", { timeout: 90_000 }, () => {
  const example = exampleUnderTest({
    example: "langgraph-ui",
    apiUrlVariable: "LANGGRAPH_UI_API",
    env: async () => ({ TENXGRAPH_RUNS_DSN: await freshDatabase("langgraph_ui") }),
  });

  const lastAgentText = (page: Page) => page.locator('[data-role="ai"] .text').last();

  it("streams the words, answers an interrupt, and rejoins a run across a reload", async () => {
    const { page, errors } = await newPage(example.browser);
    try {
      await page.goto(example.url);
      await expect.poll(() => page.getByTestId("status").textContent()).toBe("ready");

      // Words arrive one by one: the text is seen part-way before it is whole.
      await sendMessage(page, "hello");
      await expectStreamedText(lastAgentText(page), HELLO_TEXT);

      await sendMessage(page, "refund order 42");
      await page
        .getByTestId("interrupt")
        .getByRole("button", { name: "Approve" })
        .click({ timeout: 20_000 });
      await expect
        .poll(() => lastAgentText(page).textContent(), { timeout: 20_000 })
        .toBe("Order 42: Refunded 42 USD. Anything else?");
      expect(example.api.output.match(/refunded order 42/g)).toHaveLength(1);

      // Reloaded while the receipt is being sent: the page rejoins the same run, still live.
      await sendMessage(page, "receipt for order 43");
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
      expect(example.api.output.match(/sent the receipt for order 43/g)).toHaveLength(1);
      await screenshot(page, "langgraph-ui");
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  });
});
