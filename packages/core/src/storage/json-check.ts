/**
 * Where `value` holds something a store cannot keep as JSON, as `<path>: <why>` (for example
 * `input.amount: BigInt is not JSON`), or `null` when it is all plain JSON. Checked before
 * anything is written, so every store refuses the same values with the same words instead of
 * failing inside its driver, and nothing is dropped silently: JSON would turn a function field
 * into nothing and a Map into `{}`. `undefined` fields, which JSON leaves out, are fine, as are
 * objects with `toJSON` (a Date).
 */
export function findNonJson(value: unknown, path: string): string | null {
  return check(value, path, []);
}

/** The longest thread or user id the runtime accepts, in UTF-16 code units. */
export const MAX_ID_LENGTH = 256;

function check(value: unknown, path: string, ancestors: object[]): string | null {
  switch (typeof value) {
    case "bigint":
      return `${path}: BigInt is not JSON (store it as a string or a number)`;
    case "function":
      return `${path}: a function is not JSON`;
    case "symbol":
      return `${path}: a symbol is not JSON`;
    case "object":
      return value === null ? null : checkObject(value, path, ancestors);
    default:
      return null;
  }
}

function checkObject(value: object, path: string, ancestors: object[]): string | null {
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return null;
  if (value instanceof Map || value instanceof Set) {
    return `${path}: a ${value instanceof Map ? "Map" : "Set"} is not JSON (it would be stored as {})`;
  }
  if (ancestors.includes(value)) return `${path}: a circular reference is not JSON`;
  ancestors.push(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const problem = check(value[i], `${path}[${i}]`, ancestors);
        if (problem) return problem;
      }
      return null;
    }
    for (const key of Object.keys(value)) {
      const field = (value as Record<string, unknown>)[key];
      const problem = check(field, `${path}.${key}`, ancestors);
      if (problem) return problem;
    }
    return null;
  } finally {
    ancestors.pop();
  }
}
