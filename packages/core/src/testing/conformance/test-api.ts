/**
 * The slice of a test framework the conformance suite uses. The suite takes it as an argument
 * instead of importing a framework, so `@tenxgraph/core/testing` loads without vitest installed.
 * The vitest module (`await import("vitest")`) and jest's globals both fit this shape.
 *
 * @module
 */

/** A test or hook body: the suite's are all async. */
export type TestFn = () => Promise<void>;

/** The synchronous matchers the suite calls; also the shape of `expect(x).not`. */
export interface Matchers {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toStrictEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
  toHaveLength(length: number): void;
  toHaveProperty(property: string): void;
  toBeDefined(): void;
  toBeNull(): void;
  toBeNaN(): void;
  toBeGreaterThan(expected: number): void;
  toBeGreaterThanOrEqual(expected: number): void;
  toBeLessThan(expected: number): void;
}

/** The matchers the suite calls on `expect(promise).resolves` and `.rejects`. */
export interface AsyncMatchers {
  toThrow(): Promise<void>;
  toBeUndefined(): Promise<void>;
}

/** What `expect(actual)` returns. */
export interface Assertion extends Matchers {
  not: Matchers;
  resolves: AsyncMatchers;
  rejects: AsyncMatchers;
}

/** `expect`: `message` labels a failure where the framework supports it (jest ignores it). */
export interface Expect {
  (actual: unknown, message?: string): Assertion;
  /** An asymmetric matcher for any value made by `constructor`, e.g. `expect.any(String)`. */
  any(constructor: unknown): unknown;
  /** An asymmetric matcher for a string that contains `expected`. */
  stringContaining(expected: string): unknown;
  /** An asymmetric matcher for a string that matches `expected`. */
  stringMatching(expected: string | RegExp): unknown;
}

/** The test framework the conformance suite registers its tests with. */
export interface TestApi {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: TestFn): unknown;
  expect: Expect;
  beforeAll(fn: TestFn): unknown;
  afterAll(fn: TestFn): unknown;
  beforeEach(fn: TestFn): unknown;
  afterEach(fn: TestFn): unknown;
}
