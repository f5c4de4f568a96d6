/**
 * Where `value` holds something a store cannot keep as JSON, as `<path>: <why>` (for example
 * `input.amount: BigInt is not JSON`), or `null` when it is all plain JSON. Checked before
 * anything is written, so every store refuses the same values with the same words instead of
 * failing inside its driver, and nothing is dropped silently: JSON would turn a function field
 * into nothing and a Map into `{}`. `undefined` fields, which JSON leaves out, are fine, as are
 * objects with `toJSON` (a Date).
 */
export function findNonJson(value: unknown, path: string): string | null {
  return check(value, [path], []);
}

/** The longest thread or user id the runtime accepts, in UTF-16 code units. */
export const MAX_ID_LENGTH = 256;

/**
 * Where a value sits: the root's name, then field names and array indexes. Kept as segments and
 * written out only for a problem: a step checks every field of its new messages, and building
 * each field's path text was most of what the check allocated.
 */
type PathSegments = (string | number)[];

function pathText(path: PathSegments): string {
  return path
    .map((segment, i) =>
      i === 0 ? segment : typeof segment === "number" ? `[${segment}]` : `.${segment}`,
    )
    .join("");
}

function check(value: unknown, path: PathSegments, ancestors: object[]): string | null {
  switch (typeof value) {
    case "bigint":
      return `${pathText(path)}: BigInt is not JSON (store it as a string or a number)`;
    case "function":
      return `${pathText(path)}: a function is not JSON`;
    case "symbol":
      return `${pathText(path)}: a symbol is not JSON`;
    case "object":
      return value === null ? null : checkObject(value, path, ancestors);
    default:
      return null;
  }
}

function checkObject(value: object, path: PathSegments, ancestors: object[]): string | null {
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return null;
  if (value instanceof Map || value instanceof Set) {
    return `${pathText(path)}: a ${value instanceof Map ? "Map" : "Set"} is not JSON (it would be stored as {})`;
  }
  if (ancestors.includes(value)) return `${pathText(path)}: a circular reference is not JSON`;
  ancestors.push(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        path.push(i);
        const problem = check(value[i], path, ancestors);
        path.pop();
        if (problem) return problem;
      }
      return null;
    }
    for (const key of Object.keys(value)) {
      const field = (value as Record<string, unknown>)[key];
      path.push(key);
      const problem = check(field, path, ancestors);
      path.pop();
      if (problem) return problem;
    }
    return null;
  } finally {
    ancestors.pop();
  }
}
