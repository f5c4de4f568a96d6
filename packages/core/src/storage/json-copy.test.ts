import { describe, expect, it } from "vitest";
import { jsonCopy } from "./json-copy.js";

const viaText = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

describe("jsonCopy", () => {
  const samples: [string, unknown][] = [
    ["a message", { id: "m1", role: "tool", content: "ok", toolCallId: "c1", createdAt: "2026" }],
    ["nested arrays and objects", { a: [1, [2, { b: [null, true, "x"] }]], c: {} }],
    ["a Date, through toJSON", { at: new Date("2026-11-30T12:00:00Z") }],
    [
      "undefined, functions and symbols in an object",
      { a: undefined, f: () => 1, s: Symbol("s"), k: 1 },
    ],
    ["undefined, functions and symbols in an array", [undefined, () => 1, Symbol("s"), 2]],
    ["non-finite numbers and -0", { nan: NaN, inf: Infinity, negInf: -Infinity, zero: -0 }],
    ["boxed primitives", { n: new Number(3), s: new String("x"), b: new Boolean(false) }],
    [
      "a Map, a Set and a class instance",
      {
        m: new Map([[1, 2]]),
        s: new Set([1]),
        c: new (class {
          x = 1;
        })(),
      },
    ],
    ["a typed array", { bytes: new Uint8Array([1, 2]) }],
    ["toJSON that returns undefined", { gone: { toJSON: () => undefined }, kept: 1 }],
    [
      "toJSON in an array, given its index as a string",
      [{ toJSON: (key: string) => typeof key + key }],
    ],
    ["toJSON with its key", { field: { toJSON: (key: string) => `key:${key}` } }],
    ["a __proto__ field", JSON.parse('{"__proto__": {"polluted": true}, "a": 1}')],
    ["lone surrogates and U+0000", { text: "a\ud800b\u0000c" }],
    [
      "a shared (not circular) object",
      (() => {
        const shared = { x: 1 };
        return { a: shared, b: [shared] };
      })(),
    ],
    ["top-level primitives", ["text", 1, true, null]],
  ];

  it.each(samples)("copies %s exactly as a JSON round trip does", (_name, value) => {
    const copy = jsonCopy(value);
    expect(copy).toStrictEqual(viaText(value));
    expect(Object.getPrototypeOf(copy)).toBe(Object.getPrototypeOf(viaText(value)));
    expect(JSON.stringify(copy)).toBe(JSON.stringify(value));
  });

  it("makes a copy that shares nothing with the original", () => {
    const original = { list: [{ deep: { value: 1 } }] };
    const copy = jsonCopy(original);
    copy.list[0]!.deep.value = 2;
    expect(original.list[0]!.deep.value).toBe(1);
  });

  it("keeps a __proto__ field a field, without touching the copy's prototype", () => {
    const copy = jsonCopy(JSON.parse('{"__proto__": {"polluted": true}}') as object);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(["__proto__"]);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it("refuses a BigInt and a cycle with a TypeError, as JSON does", () => {
    expect(() => jsonCopy({ n: 1n })).toThrow(TypeError);
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = { back: cycle };
    expect(() => jsonCopy(cycle)).toThrow(/circular/);
  });

  it("returns undefined at the top as is", () => {
    expect(jsonCopy(undefined)).toBeUndefined();
  });
});
