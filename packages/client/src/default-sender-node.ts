import { nodeSender } from "./node-sender.js";
import type { Sender } from "./sender.js";

/**
 * The sender of a client given no `fetch`, in Node.js (the `node` condition of the package's
 * `#default-sender` import): `node:http` over keep-alive connections, which costs a third of
 * the CPU of Node's fetch per request.
 */
export function defaultSender(): Sender {
  return nodeSender;
}
