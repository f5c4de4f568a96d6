import { TenxgraphClientError } from "./client-error.js";

/**
 * The JSON values of an NDJSON byte stream, one per line, in order. Blank lines and `\r\n`
 * endings are accepted; the last line may end without a newline. A line that is not JSON ends
 * the stream with `INVALID_STREAM`. Returning early cancels the stream, which closes the
 * connection under it (see {@link textLines}).
 */
export async function* ndjsonLines(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): AsyncGenerator<unknown> {
  for await (const line of textLines(body)) if (line.trim() !== "") yield parseLine(line);
}

/**
 * The lines of a UTF-8 byte stream, without their `\n` (or `\r\n`), the last one even without
 * a newline. Network chunks split lines (and UTF-8 characters) anywhere, so bytes are decoded in
 * streaming mode and a line is given only once its newline arrives. Returning early closes the
 * stream, which closes the connection under it. NDJSON and Server-Sent Events read by it.
 */
export async function* textLines(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const bytes of "getReader" in body ? streamChunks(body) : body) {
    buffer += decoder.decode(bytes, { stream: true });
    let newline = buffer.indexOf("\n");
    while (newline !== -1) {
      yield buffer.slice(0, newline).replace(/\r$/, "");
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
    }
  }
  buffer += decoder.decode();
  if (buffer !== "") yield buffer.replace(/\r$/, "");
}

/**
 * The chunks of a web stream. Reads through `getReader()` (async iteration of a ReadableStream
 * is missing in some browsers); returning early cancels the stream, so the server sees the
 * client go.
 */
export async function* streamChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      yield next.value;
    }
    done = true;
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch (error) {
    throw new TenxgraphClientError({
      code: "INVALID_STREAM",
      status: 200,
      message: `A stream line is not JSON: ${line.length > 200 ? `${line.slice(0, 200)}…` : line}`,
      cause: error,
    });
  }
}
