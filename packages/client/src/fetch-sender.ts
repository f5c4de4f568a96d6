import type { Sender } from "./sender.js";
import { streamChunks } from "./ndjson-lines.js";

/** A {@link Sender} on a `fetch` (the browser's, Node's, or one the caller gives). */
export function fetchSender(fetchFn: typeof fetch): Sender {
  return async ({ url, method, headers, body, signal }) => {
    const response = await fetchFn(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      ...(signal ? { signal } : {}),
    });
    return {
      status: response.status,
      statusText: response.statusText,
      header: (name) => response.headers.get(name),
      text: () => response.text(),
      chunks: () => (response.body ? streamChunks(response.body) : emptyBody()),
    };
  };
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}
