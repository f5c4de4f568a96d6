import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY, decideRetry, resolveRetry, retryAfterMs, sleep } from "./retry.js";

const policy = resolveRetry({ maxAttempts: 4, initialDelayMs: 100, maxDelayMs: 1000 });

describe("decideRetry", () => {
  it("doubles the wait per attempt, half of it jittered, capped by maxDelayMs", () => {
    const waits = (random: number) =>
      [1, 2, 3].map((attempt) => {
        const decision = decideRetry(
          attempt,
          { ...policy, maxAttempts: 10 },
          null,
          null,
          () => random,
        );
        return decision.retry ? decision.delayMs : -1;
      });
    expect(waits(0)).toEqual([50, 100, 200]);
    expect(waits(1)).toEqual([100, 200, 400]);
    const capped = decideRetry(9, { ...policy, maxAttempts: 10 }, null, null, () => 1);
    expect(capped).toEqual({ retry: true, delayMs: 1000 });
  });

  it("stops after maxAttempts requests", () => {
    expect(decideRetry(3, policy, null).retry).toBe(true);
    expect(decideRetry(4, policy, null)).toEqual({
      retry: false,
      reason: "attempts",
      retryAfterMs: null,
    });
  });

  it("waits exactly what retry-after asks, and gives up when that is above maxDelayMs", () => {
    expect(decideRetry(1, policy, 750)).toEqual({ retry: true, delayMs: 750 });
    expect(decideRetry(1, policy, 0)).toEqual({ retry: true, delayMs: 0 });
    expect(decideRetry(1, policy, 1500)).toEqual({
      retry: false,
      reason: "retry-after",
      retryAfterMs: 1500,
    });
  });

  it("does not start a wait that would outlast the node's deadline", () => {
    expect(decideRetry(1, policy, 750, 1000)).toEqual({ retry: true, delayMs: 750 });
    expect(decideRetry(1, policy, 750, 750)).toEqual({
      retry: false,
      reason: "deadline",
      retryAfterMs: 750,
    });
    const backoff = decideRetry(2, policy, null, 1, () => 0.5);
    expect(backoff).toEqual({ retry: false, reason: "deadline", retryAfterMs: null });
  });
});

describe("retryAfterMs", () => {
  const now = Date.parse("2026-11-30T12:00:00Z");

  it("reads retry-after-ms, retry-after seconds and retry-after dates, in any header case", () => {
    expect(retryAfterMs({ "retry-after-ms": "250", "retry-after": "9" }, now)).toBe(250);
    expect(retryAfterMs({ "Retry-After": "3" }, now)).toBe(3000);
    expect(retryAfterMs({ "retry-after": "1.5" }, now)).toBe(1500);
    expect(retryAfterMs({ "retry-after": "Mon, 30 Nov 2026 12:00:07 GMT" }, now)).toBe(7000);
  });

  it("counts a date in the past as no wait, and ignores what it cannot read", () => {
    expect(retryAfterMs({ "retry-after": "Mon, 30 Nov 2026 11:59:00 GMT" }, now)).toBe(0);
    expect(retryAfterMs({ "retry-after": "soon" }, now)).toBeNull();
    expect(retryAfterMs({ "retry-after": "-3" }, now)).toBeNull();
    expect(retryAfterMs({}, now)).toBeNull();
    expect(retryAfterMs(undefined, now)).toBeNull();
  });
});

describe("resolveRetry", () => {
  it("fills in the defaults and freezes the result", () => {
    const resolved = resolveRetry({ maxAttempts: 5 });
    expect(resolved).toEqual({ ...DEFAULT_RETRY, maxAttempts: 5 });
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(resolveRetry(undefined)).toEqual(DEFAULT_RETRY);
  });

  it("names the field that is wrong", () => {
    expect(() => resolveRetry({ maxAttempts: 0 })).toThrow(
      "retry.maxAttempts must be an integer >= 1, got 0",
    );
    expect(() => resolveRetry({ maxAttempts: 2.5 })).toThrow("retry.maxAttempts");
    expect(() => resolveRetry({ initialDelayMs: -1 })).toThrow("retry.initialDelayMs");
    expect(() => resolveRetry({ maxDelayMs: Number.NaN })).toThrow("retry.maxDelayMs");
  });
});

describe("sleep", () => {
  it("resolves after the wait", async () => {
    await expect(sleep(1, new AbortController().signal)).resolves.toBeUndefined();
  });

  it("rejects with the signal's reason when it aborts, also when already aborted", async () => {
    const controller = new AbortController();
    const waiting = sleep(600_000, controller.signal);
    controller.abort(new Error("stopped"));
    await expect(waiting).rejects.toThrow("stopped");
    await expect(sleep(1, controller.signal)).rejects.toThrow("stopped");
  });
});
