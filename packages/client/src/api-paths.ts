import type { PageOptions } from "./thread-types.js";

/** The path of a thread. */
export function thread(threadId: string): string {
  return `/v1/threads/${encodeURIComponent(threadId)}`;
}

/** `?search=…&offset=…&limit=…` with only the options that are set. */
export function query(options: PageOptions): string {
  const params = new URLSearchParams();
  if (options.search) params.set("search", options.search);
  if (options.offset !== undefined) params.set("offset", String(options.offset));
  if (options.limit !== undefined) params.set("limit", String(options.limit));
  const text = params.toString();
  return text ? `?${text}` : "";
}
