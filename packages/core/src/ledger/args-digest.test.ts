import { describe, expect, it } from "vitest";
import { argsDigest } from "./args-digest.js";

describe("argsDigest", () => {
  it("is the same for the same values, whatever the whitespace and key order", () => {
    const digest = argsDigest('{"order_id":"42","amount":{"cents":4200,"currency":"USD"}}');
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(argsDigest(' { "amount" : { "currency":"USD", "cents":4200 }, "order_id":"42" } ')).toBe(
      digest,
    );
  });

  it("differs when a value, a key, an array's order or a type differs", () => {
    const digests = [
      '{"order_id":"42"}',
      '{"order_id":"999"}',
      '{"order":"42"}',
      '{"order_id":42}',
      '{"ids":[1,2]}',
      '{"ids":[2,1]}',
      '{"order_id":null}',
    ].map(argsDigest);
    expect(new Set(digests).size).toBe(digests.length);
  });

  it("reads empty arguments as {}, as the tool node does", () => {
    expect(argsDigest("")).toBe(argsDigest("{}"));
    expect(argsDigest("  ")).toBe(argsDigest("{}"));
  });

  it("tells apart arguments that differ only in a lone surrogate", () => {
    const high = '{"q":"a\ud800"}';
    const otherHigh = '{"q":"a\ud801"}';
    expect(argsDigest(high)).not.toBe(argsDigest(otherHigh));
    // Text that is not JSON is digested as it is.
    expect(argsDigest("not json \ud800")).not.toBe(argsDigest("not json \ud801"));
    expect(argsDigest("not json")).toBe(argsDigest("not json"));
  });
});
