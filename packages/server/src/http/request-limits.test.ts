import { describe, expect, it } from "vitest";
import { idProblem, MAX_JSON_DEPTH, requireJsonDepth, requireValidId } from "./request-limits.js";

describe("request limits", () => {
  it("names what makes an id unstorable, and passes a good one", () => {
    expect(idProblem("thread-1")).toBeNull();
    expect(idProblem("   ")).toMatch(/blank/);
    expect(idProblem("x".repeat(257))).toMatch(/257 characters/);
    expect(idProblem("a\u0000b")).toMatch(/U\+0000/);
    expect(idProblem("a\uD800")).toMatch(/surrogate/);
  });

  it("refuses a bad path id with a 422 naming its field", () => {
    expect(() => requireValidId("", ["path", "thread_id"])).toThrow(
      expect.objectContaining({ status: 422, message: "Invalid thread_id: must not be blank" }),
    );
  });

  it("measures nesting without recursion: the limit passes, one deeper is a 422", () => {
    const nest = (depth: number) => {
      let value: unknown = 1;
      for (let i = 0; i < depth; i++) value = [value];
      return value;
    };
    expect(() => requireJsonDepth(nest(MAX_JSON_DEPTH), "body")).not.toThrow();
    expect(() => requireJsonDepth(nest(MAX_JSON_DEPTH + 1), "body")).toThrow(
      expect.objectContaining({ status: 422, code: "JSON_TOO_DEEP" }),
    );
    expect(() => requireJsonDepth(nest(100_000), "body")).toThrow();
  });
});
