import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it where missing). */
export const CHROMIUM = process.env.TENXGRAPH_CHROMIUM ?? "/usr/bin/chromium";

/** Where the tests keep their screenshots (gitignored; CI can keep them as artifacts). */
export const ARTIFACTS = fileURLToPath(new URL("../artifacts/", import.meta.url));

/** Headless Chromium. `--no-sandbox`: CI runs as root, where Chromium's sandbox refuses to start. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
}

/**
 * A fresh page (its own session storage, so its own token) whose errors the test checks: a
 * broken page must not pass by showing the right text by chance.
 */
export async function newPage(browser: Browser): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  // Something the server's Content-Security-Policy blocked is a broken page too.
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy/.test(message.text()))
      errors.push(message.text());
  });
  return { page, errors };
}

/** Saves a full-page screenshot as `artifacts/<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
}

/** Opens the inspector at `path` and pastes `token` into the form the page asks with. */
export async function signIn(page: Page, base: string, token: string, path = "/inspector/") {
  await page.goto(`${base}${path}`);
  await page.locator("textarea[name=token]").fill(token);
  await page.getByRole("button", { name: "Use this token" }).click();
}
