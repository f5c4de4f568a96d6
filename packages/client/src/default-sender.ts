import { fetchSender } from "./fetch-sender.js";
import type { Sender } from "./sender.js";

/**
 * The sender of a client given no `fetch`, outside Node.js (browsers, workers, edge runtimes):
 * the global fetch. In Node.js the package's `#default-sender` import names
 * `default-sender-node.js` instead, so a browser bundle never holds `node:http`.
 */
export function defaultSender(): Sender {
  // Bound: a browser's fetch throws "Illegal invocation" when called as a method of another object.
  return fetchSender(globalThis.fetch.bind(globalThis));
}
