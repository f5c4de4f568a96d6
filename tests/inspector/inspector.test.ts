import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { TenxgraphClient } from "@tenxgraph/client";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readEffects } from "../support/effect-log.js";
import { freshStore } from "../support/fresh-store.js";
import { tokenFor } from "../server/support/http.js";
import { launchBrowser, newPage, screenshot, signIn } from "./support/browser.js";
import {
  startInspectorServer,
  stopInspectorServer,
  type InspectorServerProcess,
} from "./support/inspector-processes.js";

/**
 * The inspector in real headless Chromium against a real server process on 127.0.0.1 with
 * SQLite. Before the tests, a first server is SIGKILLed while charge_card runs on alice's thread
 * `order-9`, leaving that call in doubt; the tests use a second server on the same file.
 */
// A browser test waits on a page that waits on a server: under a loaded CI machine that takes
// longer than the suite's 20 s default.
describe("the web inspector in Chromium", { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-inspector-"));
  const store = freshStore("sqlite", "inspector", dir);
  const effectLog = join(dir, "effects.jsonl");
  // The team graph (a supervisor with a WORKER subgraph) for the subgraph-threads test.
  const teamStore = freshStore("sqlite", "inspector_team", dir);
  const teamEffects = join(dir, "team-effects.jsonl");
  let server: InspectorServerProcess;
  let team: InspectorServerProcess;
  let browser: Browser;
  let alice: string;
  const pageErrors: string[][] = [];

  beforeAll(async () => {
    alice = await tokenFor("alice");
    await leaveChargeInDoubt("order-9", "charge 9");
    // Processes start here, not in a test: on a loaded CI machine a start alone can take much of
    // a test's 60 s. Each is kept as it comes, so afterAll stops it even if another fails.
    await Promise.all([
      startInspectorServer({ store, effectLog }).then((started) => (server = started)),
      startInspectorServer({ store: teamStore, effectLog: teamEffects, team: true }).then(
        (started) => (team = started),
      ),
      launchBrowser().then((launched) => (browser = launched)),
    ]);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await stopInspectorServer(server);
    if (team) await stopInspectorServer(team);
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(() => {
    // Every page a test opened threw nothing.
    for (const errors of pageErrors.splice(0)) expect(errors).toEqual([]);
  });

  /** A server whose charge_card hangs runs `text` on alice's `threadId`, and is SIGKILLed mid call. */
  async function leaveChargeInDoubt(threadId: string, text: string) {
    const doomed = await startInspectorServer({ store, effectLog, hangCharges: true });
    const client = new TenxgraphClient({ baseUrl: doomed.base, token: alice });
    const run = client
      .stream(text, { threadId })
      .toArray()
      .catch(() => []);
    for (;;) {
      const ledger = await client.getLedger(threadId).catch(() => []);
      if (ledger.some((e) => e.tool_name === "charge_card" && e.status === "started")) break;
      await sleep(50);
    }
    await doomed.worker.kill();
    await run;
  }

  async function open(path = "/inspector/", base = server.base): Promise<Page> {
    const { page, errors } = await newPage(browser);
    pageErrors.push(errors);
    page.setDefaultTimeout(15_000);
    await signIn(page, base, alice, path);
    return page;
  }

  it("asks for a token once, then lists the caller's threads with what needs attention", async () => {
    const page = await open();
    const row = page.locator("tr[data-thread='order-9']");
    await row.waitFor();
    expect(await row.textContent()).toContain("1 in doubt");
    // The token is kept for the tab: a reload asks nothing.
    await page.reload();
    await row.waitFor();
    expect(await page.locator("textarea[name=token]").count()).toBe(0);
    await screenshot(page, "threads");
  });

  it("streams a run: node steps and tool calls as they come, then links each call to its ledger row", async () => {
    const page = await open("/inspector/threads/chat-1");
    await page.getByText("A new thread").waitFor();
    await send(page, "charge 7");
    await page.getByText("Done: Charged order 7").waitFor();
    const activity = page.locator("ol.activity");
    for (const line of ["step 0: MAIN", "charge_card started", "charge_card done", "step 1: TOOL"])
      expect(await activity.textContent()).toContain(line);

    const row = page.locator("tr[data-key='charge_card:order-7-charge']");
    await row.waitFor();
    const cells = await row.locator("td").allTextContents();
    expect(cells.slice(0, 4)).toEqual([
      "charge_card",
      "completed",
      "1",
      "charge_card:order-7-charge",
    ]);
    expect(cells[6]).toBe("ran");
    const link = page.locator("[data-call='call_1'] a");
    expect(await link.textContent()).toBe("ledger: completed, attempt 1");
    await link.click();
    expect(page.url()).toMatch(/#ledger-charge_card_order-7-charge$/);
    expect(readEffects<{ line: string }>(effectLog).map((e) => e.line)).toEqual([
      "charged order 7",
    ]);
    await screenshot(page, "thread");
  });

  it("lists the versions, opens a past one, and forks from it: the charge replays", async () => {
    const page = await open("/inspector/threads/chat-1");
    const timeline = page.locator("[data-panel=timeline]");
    await timeline.locator("tr[data-version='4']").waitFor();
    const newest = await timeline.locator("tr[data-version='4'] td").allTextContents();
    expect(newest[2]).toBe("MAIN");
    expect(newest[4]).toBe("+1 message");
    // Version 2: the model has asked for the charge, the tool node is next.
    await timeline.getByRole("button", { name: "v2", exact: true }).click();
    const past = page.locator("[data-panel=past-version]");
    await past.getByText("step 1, at TOOL").waitFor();
    expect(await past.locator(".bubble").count()).toBe(2);
    await screenshot(page, "timeline");
    await past.getByRole("button", { name: "Fork from version 2" }).click();
    await page
      .locator("ol.activity")
      .getByText("charge_card done, replayed from the ledger")
      .waitFor();
    await page.locator("[data-panel=run] .badge.status-completed").waitFor();
    await timeline.locator("tr[data-version='5']").getByText("from v2").waitFor();
    const row = page.locator("tr[data-key='charge_card:order-7-charge']");
    expect((await row.locator("td").allTextContents())[6]).toBe("replayed");
    // The fork replayed the recorded charge: order 7 was charged once.
    expect(readEffects<{ line: string }>(effectLog).map((e) => e.line)).toEqual([
      "charged order 7",
    ]);
  });

  it("shows the model's tokens while it writes, and stops a hung tool", async () => {
    const page = await open("/inspector/threads/export-1");
    await send(page, "export");
    await page.locator("[data-draft]").getByText("Exporting your").waitFor();
    await page.locator("ol.activity").getByText("slow_export started").waitFor();
    await page.getByRole("button", { name: "Stop" }).click();
    await page.locator("[data-panel=run] .badge.status-stopped").waitFor();
    await page.locator(".thread-head .badge.status-stopped").waitFor();
    // The stopped call never recorded a result: it is listed in doubt, and the run can be
    // continued from there. The export hangs again, and is stopped again.
    const inDoubt = page.locator("[data-panel=in-doubt]");
    await inDoubt.getByText("slow_export").waitFor();
    await inDoubt.getByRole("button", { name: "Continue the run" }).click();
    await page.locator("[data-panel=run] .badge.status-running").waitFor();
    await page.locator("ol.activity").getByText("slow_export started").waitFor();
    await page.getByRole("button", { name: "Stop" }).click();
    await page.locator("[data-panel=run] .badge.status-stopped").waitFor();
  });

  it("answers an interrupt with a form built from its payload", async () => {
    const page = await open("/inspector/threads/refund-1");
    await send(page, "refund bob");
    const form = page.locator("[data-panel=interrupts] form");
    await form.getByText("Refund bob?").waitFor();
    await form.locator("input[name=approved]").check();
    await form.locator("input[name=amount_cents]").fill("300");
    await screenshot(page, "interrupt");
    await form.getByRole("button", { name: "Answer and continue" }).click();
    await page.getByText('Done: bob: {"approved":true,"amount_cents":300}').waitFor();
    // Read again once the run ended: nothing waits any more.
    await page.locator("[data-panel=interrupts]").waitFor({ state: "detached" });
  });

  it("shows when a timer resumes a sleeping thread", async () => {
    const page = await open("/inspector/threads/nap-1");
    await send(page, "remind me");
    const wake = page.locator("[data-panel=interrupts] [data-wake]");
    await wake.getByText("A timer resumes it at").waitFor();
    const at = Date.parse((await wake.getAttribute("data-wake"))!);
    expect(at).toBeGreaterThan(Date.now() + 3_000_000);
    expect(await wake.locator("time").getAttribute("datetime")).toBe(new Date(at).toISOString());
  });

  it("decides the call a SIGKILLed server left in doubt: the result checked by hand is recorded", async () => {
    const page = await open("/inspector/threads/order-9");
    const panel = page.locator("[data-panel=in-doubt]");
    await panel.getByText("its run is gone", { exact: false }).waitFor();
    await panel.getByRole("button", { name: "Continue the run" }).click();
    // The tool's policy asks a human: the run pauses and the call gets a decision form.
    const form = panel.locator("form[data-key='charge_card:order-9-charge']");
    await form.waitFor();
    await form.getByLabel("It happened: record this result").check();
    await form.locator("textarea").fill("Charged order 9 (seen in the provider's dashboard)");
    await screenshot(page, "in-doubt");
    await form.getByRole("button", { name: "Decide and continue" }).click();
    await page.getByText("Done: Charged order 9 (seen in the provider's dashboard)").waitFor();

    const cells = await page
      .locator("tr[data-key='charge_card:order-9-charge'] td")
      .allTextContents();
    expect(cells.slice(0, 3)).toEqual(["charge_card", "completed", "2"]);
    expect(await panel.count()).toBe(0);
    // Neither server charged order 9: the first hung before charging, the second was told.
    expect(readEffects<{ line: string }>(effectLog).map((e) => e.line)).not.toContain(
      "charged order 9",
    );
  });

  it("does not show another user's thread, in the list or by its address", async () => {
    const bob = new TenxgraphClient({ baseUrl: server.base, token: await tokenFor("bob") });
    await bob.invoke("a secret of bob's", { threadId: "bobs-thread" });
    const page = await open("/inspector/threads/bobs-thread");
    await page.getByText("Not found, or not yours").waitFor();
    expect(await page.getByText("a secret of bob's").count()).toBe(0);
    await page.getByRole("link", { name: "Back to your threads" }).click();
    await page.locator("tr[data-thread='order-9']").waitFor();
    expect(await page.locator("tr[data-thread='bobs-thread']").count()).toBe(0);
  });

  it("searches the threads, and says so when none matches", async () => {
    const page = await open();
    await page.locator("tr[data-thread='order-9']").waitFor();
    await page.locator("input[name=search]").fill("chat");
    await page.locator("tr[data-thread='order-9']").waitFor({ state: "detached" });
    expect(await page.locator("tr[data-thread]").evaluateAll((rows) => rows.length)).toBe(1);
    await page.locator("tr[data-thread='chat-1']").waitFor();
    await page.locator("input[name=search]").fill("nothing-like-it");
    await page.getByText("No thread of yours matches").waitFor();
  });

  it("draws the graph with the thread's current node highlighted", async () => {
    const page = await open("/inspector/threads/refund-1");
    await page.locator("[data-panel=graph] [data-node=__end__].current").waitFor();
    expect(await page.locator("[data-panel=graph] [data-node]").count()).toBe(4);
    await page.getByRole("link", { name: "Graph", exact: true }).click();
    await page.getByText("4 nodes").waitFor();
  });

  it("lists a thread's subgraph threads; a child's page shows its ledger and links back", async () => {
    const client = new TenxgraphClient({ baseUrl: team.base, token: alice });
    await client.invoke("charge 3", { threadId: "team-1" });
    const page = await open("/inspector/threads/team-1", team.base);
    const child = page.locator(
      "[data-panel=child-threads] tr[data-child-thread='team-1|WORKER@0']",
    );
    await child.waitFor();
    expect(await child.locator("td").nth(1).textContent()).toBe("completed");
    // The worker's call is in the child's ledger, not the supervisor's.
    expect(await page.locator("tr[data-key='charge_card:order-3-charge']").count()).toBe(0);
    await child.locator("a").click();
    await page.locator("tr[data-key='charge_card:order-3-charge']").waitFor();
    await page.getByText("Done: Charged order 3").first().waitFor();
    expect(await page.locator("[data-panel=child-threads]").count()).toBe(0);
    // It runs only through its parent: no composer, and no picture of the parent's graph.
    expect(await page.locator("[data-panel=run]").count()).toBe(0);
    expect(await page.locator("[data-panel=graph]").count()).toBe(0);
    await screenshot(page, "child-thread");
    await page.locator("[data-parent-thread='team-1'] a").click();
    await child.waitFor();
    expect(readEffects<{ line: string }>(teamEffects).map((e) => e.line)).toEqual([
      "charged order 3",
    ]);
  });
});

async function send(page: Page, text: string) {
  await page.locator("input[name=message]").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}
