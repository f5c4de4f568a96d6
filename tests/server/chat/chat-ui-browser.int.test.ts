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
 * examples/chat-ui (a Vite page with `useChat` from @ai-sdk/react) in headless Chromium, against
 * `tenxgraph api` serving the example's agent: type and see the words stream, approve a refund,
 * reload mid-run and see the run finish.
 */
describe("the useChat example page in Chromium", { timeout: 90_000 }, () => {
  const example = exampleUnderTest({
    example: "chat-ui",
    apiUrlVariable: "CHAT_UI_API",
  });

  const lastAgentText = (page: Page) => page.locator('[data-role="assistant"] .text').last();

  it("streams the words, asks before refunding, and finishes a run across a reload", async () => {
    const { page, errors } = await newPage(example.browser);
    try {
      await page.goto(example.url);
      await expect.poll(() => page.getByTestId("status").textContent()).toBe("ready");

      // Words arrive one by one: the text is seen part-way before it is whole.
      await sendMessage(page, "hello");
      await expectStreamedText(lastAgentText(page), HELLO_TEXT);

      await sendMessage(page, "refund order 42");
      const refund = page.locator('[data-tool="refund_payment"]');
      await refund.getByRole("button", { name: "Approve" }).click({ timeout: 20_000 });
      await expect
        .poll(() => lastAgentText(page).textContent(), { timeout: 20_000 })
        .toBe("Order 42: Refunded 42 USD. Anything else?");
      expect(await refund.getAttribute("data-state")).toBe("output-available");
      expect(example.api.output.match(/refunded order 42/g)).toHaveLength(1);

      // Reloaded while the receipt is being sent: the page reattaches to the same run.
      await sendMessage(page, "receipt for order 43");
      await page
        .locator('[data-tool="send_receipt"][data-state="input-available"]')
        .waitFor({ timeout: 20_000 });
      await page.reload();
      await expect
        .poll(() => lastAgentText(page).textContent(), { timeout: 20_000 })
        .toBe("Order 43: Receipt sent. Anything else?");
      await expect.poll(() => page.getByTestId("status").textContent()).toBe("ready");
      expect(
        await page.locator('[data-tool="send_receipt"]').last().getAttribute("data-state"),
      ).toBe("output-available");
      expect(example.api.output.match(/sent the receipt for order 43/g)).toHaveLength(1);
      await screenshot(page, "chat-ui");
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
    }
  });
});
