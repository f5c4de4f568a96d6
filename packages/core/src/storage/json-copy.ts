/**
 * A deep copy of `value` as `JSON.parse(JSON.stringify(value))` would make it, without the text
 * in between: about five times faster on a step's write, which the in-memory store copies on
 * every call. What JSON changes changes here too (a Date becomes its ISO string through
 * `toJSON`, `undefined` fields vanish, `undefined` in an array and non-finite numbers become
 * `null`, boxed primitives unbox), and what JSON refuses is refused here too (a BigInt, a cycle),
 * with a `TypeError`. `undefined` at the top is returned as is.
 */
export function jsonCopy<T>(value: T): T {
  return value === undefined ? value : (copyValue(value, "", []) as T);
}

function copyValue(value: unknown, key: string | number, ancestors: object[]): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      // JSON writes -0 as 0, and has no NaN or Infinity.
      return Number.isFinite(value) ? value + 0 : null;
    case "bigint":
      throw new TypeError("Do not know how to serialize a BigInt");
    case "object":
      return value === null ? null : copyObject(value, key, ancestors);
    default:
      return undefined; // functions and symbols: dropped from objects, null in arrays
  }
}

function copyObject(value: object, key: string | number, ancestors: object[]): unknown {
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  // JSON hands toJSON the key as a string, array indexes too.
  if (typeof toJSON === "function") {
    return copyValue(toJSON.call(value, String(key)), key, ancestors);
  }
  if (value instanceof Number || value instanceof String || value instanceof Boolean) {
    return copyValue(value.valueOf(), key, ancestors);
  }
  if (ancestors.includes(value)) throw new TypeError("Converting circular structure to JSON");
  ancestors.push(value);
  const copy = Array.isArray(value) ? copyArray(value, ancestors) : copyFields(value, ancestors);
  ancestors.pop();
  return copy;
}

function copyArray(array: unknown[], ancestors: object[]): unknown[] {
  const copy: unknown[] = new Array(array.length);
  for (let i = 0; i < array.length; i++) {
    copy[i] = copyValue(array[i], i, ancestors) ?? null;
  }
  return copy;
}

function copyFields(object: object, ancestors: object[]): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(object)) {
    const field = copyValue((object as Record<string, unknown>)[key], key, ancestors);
    if (field === undefined) continue;
    // A "__proto__" key is a field in JSON; assigned, it would set the copy's prototype.
    if (key === "__proto__") {
      Object.defineProperty(copy, key, {
        value: field,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      copy[key] = field;
    }
  }
  return copy;
}
