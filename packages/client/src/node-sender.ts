import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { Sender, WireResponse } from "./sender.js";

// One pool per protocol for the process, as fetch has: connections stay open between requests.
// Idle ones close after 4 s (sooner when the server's Keep-Alive hint says so), before a server's
// usual 5 s, so a request is rarely sent on a connection the server is closing.
const IDLE_MS = 4_000;
const httpAgent = new HttpAgent({ keepAlive: true, timeout: IDLE_MS });
const httpsAgent = new HttpsAgent({ keepAlive: true, timeout: IDLE_MS });

/**
 * A {@link Sender} on `node:http`/`node:https` with keep-alive connections: a third of the CPU
 * of Node's fetch per request, with no web streams. Like fetch, it sends `content-length`, and
 * aborts reject with the signal's reason; unlike fetch, it follows no redirects.
 */
export const nodeSender: Sender = ({ url, method, headers, body, signal }) =>
  new Promise((resolve, reject) => {
    const https = url.startsWith("https:");
    const send = https ? httpsRequest : httpRequest;
    if (body !== undefined)
      headers = { ...headers, "content-length": String(Buffer.byteLength(body)) };
    const request = send(url, {
      method,
      headers,
      agent: https ? httpsAgent : httpAgent,
      ...(signal ? { signal } : {}),
    });
    request.on("error", (error) => reject(signal?.aborted ? signal.reason : error));
    request.once("response", (response) => resolve(answer(response, signal)));
    request.end(body);
  });

function answer(response: IncomingMessage, signal: AbortSignal | undefined): WireResponse {
  const aborted = (error: unknown) => (signal?.aborted ? signal.reason : error);
  return {
    status: response.statusCode ?? 0,
    statusText: response.statusMessage ?? "",
    header(name) {
      const value = response.headers[name];
      return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
    },
    text() {
      return new Promise((resolve, reject) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.once("end", () => resolve(text));
        response.once("error", (error) => reject(aborted(error)));
        response.once("close", () => {
          if (!response.complete) reject(aborted(new Error("The connection closed mid-answer")));
        });
      });
    },
    async *chunks() {
      try {
        for await (const chunk of response) yield chunk as Uint8Array;
      } catch (error) {
        throw aborted(error);
      }
    },
  };
}
