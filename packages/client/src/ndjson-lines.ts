import { TenxgraphClientError } from "./client-error.js";

/**
 * The JSON values of an NDJSON byte stream, one per line, in order. Blank lines and `\r\n`
 * endings are accepted; the last line may end without a newline. A line that is not JSON ends
 * the stream with `INVALID_STREAM`. Returning early cancels the stream, which closes the
 * connection under it (see {@link textLines}).
 */
export async function* ndjsonLines(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  for await (const line of textLines(body)) if (line.trim() !== "") yield parseLine(line);
}

/**
 * The lines of a UTF-8 byte stream, without their `\n` (or `\r\n`), the last one even without
 * a newline. Network chunks split lines (and UTF-8 characters) anywhere, so bytes are decoded in
 * streaming mode and a line is given only once its newline arrives. Reads through `getReader()`
 * (async iteration of a ReadableStream is missing in some browsers); returning early cancels
 * the stream, which closes the connection under it. NDJSON and Server-Sent Events read by it.
 */
export async function* textLines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      buffer += decoder.decode(next.value, { stream: true });
      let newline = buffer.indexOf("\n");
      while (newline !== -1) {
        yield buffer.slice(0, newline).replace(/\r$/, "");
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
      }
    }
    buffer += decoder.decode();
    if (buffer !== "") yield buffer.replace(/\r$/, "");
    done = true;
  } finally {
    // Left early (break, throw, abort): cancel so the server sees the client go.
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
