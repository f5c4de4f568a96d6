import { describe, expect, it } from "vitest";
import { retryDelayMs, webhookUrlProblem, type WebhookSettings } from "./webhook-settings.js";
import { signWebhook, verifyWebhook } from "./webhook-signature.js";

const settings: WebhookSettings = { secret: "0123456789abcdef" };

describe("webhook URLs", () => {
  it("takes http and https URLs, refuses other schemes and non-URLs", () => {
    expect(webhookUrlProblem("https://hooks.example.com/x", settings)).toBeNull();
    expect(webhookUrlProblem("http://127.0.0.1:9000/x", settings)).toBeNull();
    expect(webhookUrlProblem("file:///etc/passwd", settings)).toMatch(/http or https.*'file:'/);
    expect(webhookUrlProblem("gopher://a", settings)).toMatch(/http or https/);
    expect(webhookUrlProblem("not a url", settings)).toMatch(/not a URL/);
  });

  it("refuses every URL when webhooks are not configured", () => {
    expect(webhookUrlProblem("https://hooks.example.com/x", null)).toMatch(/not configured/);
  });

  it("takes only the allowed hosts, port included, when a list is set", () => {
    const allowing = { ...settings, allowHosts: ["hooks.example.com", "billing.internal:8443"] };
    expect(webhookUrlProblem("https://hooks.example.com/a", allowing)).toBeNull();
    expect(webhookUrlProblem("https://billing.internal:8443/a", allowing)).toBeNull();
    expect(webhookUrlProblem("https://billing.internal/a", allowing)).toMatch(/allow_hosts/);
    expect(webhookUrlProblem("http://169.254.169.254/latest", allowing)).toMatch(
      /'169.254.169.254' is not in webhooks.allow_hosts/,
    );
  });

  it("backs off exponentially from retryBaseMs, capped at retryMaxMs", () => {
    const backoff = { ...settings, retryBaseMs: 100, retryMaxMs: 1000 };
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(backoff, n))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    expect(retryDelayMs(settings, 1)).toBe(1000);
  });
});

describe("webhook signatures", () => {
  const body = JSON.stringify({ id: "run:3", type: "run.completed" });

  it("verifies its own signature, and refuses another secret, body or an old timestamp", () => {
    const now = 1_800_000_000;
    const header = signWebhook("secret-a", body, now);
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook("secret-a", body, header, now)).toBe(true);
    expect(verifyWebhook("secret-b", body, header, now)).toBe(false);
    expect(verifyWebhook("secret-a", `${body} `, header, now)).toBe(false);
    expect(verifyWebhook("secret-a", body, header, now + 301)).toBe(false);
    expect(verifyWebhook("secret-a", body, "v1=abc", now)).toBe(false);
  });
});
