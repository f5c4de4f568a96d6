/**
 * Calls `found` every `intervalMs` until it returns a value other than `undefined`; rejects
 * after `timeoutMs` with `what` in the message. Waits in these tests end on conditions.
 */
export async function eventually<T>(
  what: string,
  found: () => Promise<T | undefined>,
  { timeoutMs = 15_000, intervalMs = 50 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await found();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`still waiting after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
