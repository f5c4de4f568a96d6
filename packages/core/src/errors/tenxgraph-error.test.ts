import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "./codes.js";
import { NodeTimeoutError, StaleStateError } from "./errors.js";
import { isTenxgraphError, TenxgraphError } from "./tenxgraph-error.js";

describe("isTenxgraphError", () => {
  it("recognises our errors, and with a code only those carrying it", () => {
    const stale = new StaleStateError("t1", 3, 4);
    expect(isTenxgraphError(stale)).toBe(true);
    expect(isTenxgraphError(stale, "STORAGE_CONFLICT_001")).toBe(true);
    expect(isTenxgraphError(stale, "NODE_TIMEOUT_001")).toBe(false);
    expect(
      isTenxgraphError(new NodeTimeoutError("tool", "charge_card", 5), "NODE_TIMEOUT_002"),
    ).toBe(true);
  });

  it("recognises an error of another copy of the package, by its code alone", () => {
    // What a second installed copy of @tenxgraph/core throws: the same shape, another class.
    class OtherCopyError extends Error {
      readonly code = ERROR_CODES.STORAGE_CONFLICT_001;
    }
    const error = new OtherCopyError("stale");
    expect(error instanceof TenxgraphError).toBe(false);
    expect(isTenxgraphError(error, "STORAGE_CONFLICT_001")).toBe(true);
  });

  it("recognises an error made in another realm", () => {
    const error: unknown = runInNewContext(
      `Object.assign(new Error("late"), { code: "NODE_TIMEOUT_001" })`,
    );
    expect(error instanceof Error).toBe(false);
    expect(isTenxgraphError(error, "NODE_TIMEOUT_001")).toBe(true);
  });

  it("refuses unknown codes, plain objects and non-errors", () => {
    expect(isTenxgraphError(Object.assign(new Error("x"), { code: "ENOENT" }))).toBe(false);
    expect(isTenxgraphError({ code: "STORAGE_CONFLICT_001", message: "x" })).toBe(false);
    expect(isTenxgraphError("STORAGE_CONFLICT_001")).toBe(false);
    expect(isTenxgraphError(null)).toBe(false);
    expect(isTenxgraphError(new Error("plain"))).toBe(false);
  });
});
