import { describe, expect, it } from "vitest";
import { isClientError } from "./client-error.js";
import { ndjsonLines } from "./ndjson-lines.js";

/** A byte stream that hands out `bytes` cut at `cuts` (offsets), as a network might. */
function chunked(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const edges = [0, ...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length];
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i + 1 >= edges.length) return controller.close();
      controller.enqueue(bytes.slice(edges[i], edges[i + 1]));
      i += 1;
    },
  });
}

async function all(stream: ReadableStream<Uint8Array>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const value of ndjsonLines(stream)) out.push(value);
  return out;
}

const values = [
  { event: "message", text: "Grüße, 東京 🚀" },
  { event: "updates", data: { status: "node_invoked", n: 1 } },
  { event: "message", text: 'line with \\n escaped and "quotes"' },
];
const body = new TextEncoder().encode(values.map((v) => JSON.stringify(v)).join("\n") + "\n");

describe("ndjsonLines", () => {
  it("gives every line whole wherever the chunks are cut, inside multi-byte characters too", async () => {
    // Every single cut point, then every byte on its own.
    for (let cut = 1; cut < body.length; cut++) {
      expect(await all(chunked(body, [cut]))).toEqual(values);
    }
    const everyByte = Array.from({ length: body.length }, (_, i) => i);
    expect(await all(chunked(body, everyByte))).toEqual(values);
  });

  it("reads an async iterable of bytes (Node.js's body) as it reads a web stream", async () => {
    async function* pieces(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < body.length; i += 5) yield body.slice(i, i + 5);
    }
    const out: unknown[] = [];
    for await (const value of ndjsonLines(pieces())) out.push(value);
    expect(out).toEqual(values);
  });

  it("reads a last line without a newline, CRLF endings and blank lines", async () => {
    const text = '{"a":1}\r\n\n{"b":2}\n\r\n{"c":3}';
    expect(await all(chunked(new TextEncoder().encode(text), [3, 9]))).toEqual([
      { a: 1 },
      { b: 2 },
      { c: 3 },
    ]);
  });

  it("ends with INVALID_STREAM on a line that is not JSON, after the lines before it", async () => {
    const seen: unknown[] = [];
    const error = await (async () => {
      for await (const v of ndjsonLines(
        chunked(new TextEncoder().encode('{"a":1}\ndata: x\n'), []),
      ))
        seen.push(v);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([{ a: 1 }]);
    expect(isClientError(error, "INVALID_STREAM")).toBe(true);
  });

  it("cancels the byte stream when the reader leaves early", async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode('{"tick":1}\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const _ of ndjsonLines(stream)) break;
    expect(cancelled).toBe(true);
  });
});
