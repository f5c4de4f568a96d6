import { describe, expect, it } from "vitest";
import { latestTick, nextTick, scheduleProblem } from "./cron-time.js";

describe("cron times", () => {
  it("checks the expression and the time zone", () => {
    expect(scheduleProblem("0 9 * * 1-5", "Europe/Paris")).toBeNull();
    expect(scheduleProblem("*/5 * * * * *", "UTC")).toBeNull();
    expect(scheduleProblem("every day", "UTC")).toMatch(/not a cron expression/);
    expect(scheduleProblem("0 9 * * *", "Mars/Olympus")).toMatch(/not an IANA time zone/);
  });

  it("ticks in the schedule's time zone", () => {
    const after = new Date("2026-12-05T07:00:00Z");
    // 09:00 in Paris is 08:00 UTC in December.
    expect(nextTick("0 9 * * *", "Europe/Paris", after).toISOString()).toBe(
      "2026-12-05T08:00:00.000Z",
    );
    expect(nextTick("0 9 * * *", "UTC", after).toISOString()).toBe("2026-12-05T09:00:00.000Z");
  });

  it("owes one tick for many missed: the latest at or before now", () => {
    const now = new Date("2026-12-05T12:07:30Z");
    expect(latestTick("*/5 * * * *", "UTC", now).toISOString()).toBe("2026-12-05T12:05:00.000Z");
    const onTheTick = new Date("2026-12-05T12:10:00Z");
    expect(latestTick("*/5 * * * *", "UTC", onTheTick).toISOString()).toBe(
      "2026-12-05T12:10:00.000Z",
    );
  });
});
