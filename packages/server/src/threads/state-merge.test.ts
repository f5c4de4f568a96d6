import { describe, expect, it } from "vitest";
import { mergeState } from "./state-merge.js";
import { THREAD_NAME_FIELD } from "./thread-name.js";

describe("mergeState (PUT …/state)", () => {
  it("merges objects deeply, never overwrites with null, replaces other values", () => {
    const stored = { profile: { name: "Ann", city: "Oslo" }, tags: ["a"], note: "keep" };
    const merged = mergeState(stored, {
      profile: { city: "Bergen", zip: null },
      tags: ["b"],
      note: null,
    });
    expect(merged).toEqual({ profile: { name: "Ann", city: "Bergen" }, tags: ["b"], note: "keep" });
  });

  it("leaves the server's own keys alone", () => {
    const stored = { [THREAD_NAME_FIELD]: "Orders" };
    const merged = mergeState(stored, {
      [THREAD_NAME_FIELD]: "Hijacked",
      messages: [],
      context: [],
      execution_meta: {},
    });
    expect(merged).toEqual(stored);
  });
});
