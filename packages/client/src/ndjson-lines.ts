import { TenxgraphClientError } from "./client-error.js";

/**
 * The JSON values of an NDJSON byte stream, one per line, in order. Network chunks split lines
 * (and UTF-8 characters) anywhere, so bytes are decoded in streaming mode and a line is parsed
 * only once its newline arrives; the last line may end without one. Blank lines and `\r\n`
 * endings are accepted. A line that is not JSON ends the stream with `INVALID_STREAM`.
 *
 * Reads through `getReader()` (async iteration of a ReadableStream is missing in some
 * browsers). Returning early cancels the stream, which closes the connection under it.
 */
export async function* ndjsonLines(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
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
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.trim() !== "") yield parseLine(line);
        newline = buffer.indexOf("\n");
      }
    }
    buffer += decoder.decode();
    if (buffer.trim() !== "") yield parseLine(buffer);
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
