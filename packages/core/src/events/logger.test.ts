import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonLogger } from "./logger.js";

describe("jsonLogger", () => {
  afterEach(() => vi.restoreAllMocks());

  it("writes an error field with its type, message, code, stack and cause, not as {}", () => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    const cause = new Error("socket closed");
    const error = Object.assign(new TypeError("write failed", { cause }), { code: "E_WRITE" });
    jsonLogger().warn({ err: error, threadId: "t" }, "Could not write");

    const record = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(record).toMatchObject({
      level: "warn",
      msg: "Could not write",
      threadId: "t",
      err: {
        type: "TypeError",
        message: "write failed",
        code: "E_WRITE",
        stack: expect.stringContaining("write failed"),
        cause: { type: "Error", message: "socket closed" },
      },
    });
  });

  it("drops records below its level", () => {
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    jsonLogger("warn").info({}, "quiet");
    expect(write).not.toHaveBeenCalled();
  });
});
