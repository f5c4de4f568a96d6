/**
 * A deep copy of state fields, without structuredClone's fixed cost for the common state that
 * has no fields besides its messages.
 */
export function deepCopy<T extends object>(value: T): T {
  for (const _ in value) return structuredClone(value);
  return {} as T;
}
