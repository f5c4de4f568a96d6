import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonLogger } from "./logger.js";

describe("jsonLogger", () => {
  afterEach(() => vi.restoreAllMocks());

  /** Captures what the logger writes to stderr, one parsed record per line. */
  function captureRecords(): Record<string, unknown>[] {
    const records: Record<string, unknown>[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      for (const line of String(chunk).split("\n").filter(Boolean)) {
        records.push(JSON.parse(line) as Record<string, unknown>);
      }
      return true;
    });
    return records;
  }

  function failure(): Error {
    const cause = new Error("socket closed");
    return Object.assign(new TypeError("write failed", { cause }), { code: "E_WRITE" });
  }

  it("writes an error field as one line with its type, message, code and cause, not as {}", () => {
    const records = captureRecords();
    jsonLogger().warn({ err: failure(), threadId: "t" }, "Could not write");

    expect(records).toHaveLength(1);
    const record = records[0]!;
    expect(record).toMatchObject({
      level: "warn",
      msg: "Could not write",
      threadId: "t",
      err: {
        type: "TypeError",
        message: "write failed",
        code: "E_WRITE",
        cause: { type: "Error", message: "socket closed" },
      },
    });
    expect(JSON.stringify(record)).not.toContain("stack");
  });

  it("adds the stacks of the error and its cause at level debug", () => {
    const records = captureRecords();
    jsonLogger("debug").error({ err: failure() }, "Could not write");

    expect(records[0]).toMatchObject({
      level: "error",
      msg: "Could not write",
      err: {
        type: "TypeError",
        message: "write failed",
        code: "E_WRITE",
        stack: expect.stringContaining("write failed"),
        cause: { type: "Error", message: "socket closed", stack: expect.any(String) },
      },
    });
  });

  it("drops records below its level", () => {
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    jsonLogger("warn").info({}, "quiet");
    expect(write).not.toHaveBeenCalled();
  });
});
