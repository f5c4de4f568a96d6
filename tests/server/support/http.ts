import { SignJWT } from "jose";

/** The HMAC secret test servers check tokens with. */
export const TEST_JWT_SECRET = "server-tests-secret";

/** A signed HS256 token for `userId` (expired when `expired`). */
export async function tokenFor(
  userId: string,
  options: { expired?: boolean; secret?: string } = {},
) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ user_id: userId })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuedAt(now - 120)
    .setExpirationTime(options.expired ? now - 60 : now + 3600)
    .sign(new TextEncoder().encode(options.secret ?? TEST_JWT_SECRET));
}

/** An answer: status, parsed JSON body (or the text), headers. */
export interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
  headers: Headers;
}

/** A JSON caller of one server as one user. */
export function caller(base: string, token?: string) {
  return async function call(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    const response = await fetch(base + path, {
      method,
      headers: {
        "content-type": "application/json",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      },
      ...(body === undefined
        ? {}
        : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // NDJSON or bytes: the caller reads `text`.
    }
    return { status: response.status, body: parsed, text, headers: response.headers };
  };
}

/** A user message as 10xGraph clients send it. */
export function userMessage(text: string) {
  return { role: "user", content: [{ type: "text", text }], message_id: "0" };
}

/** The lines of an NDJSON body, parsed. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function ndjson(text: string): any[] {
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line));
}

/** True when `body` is the contract's error envelope. */
export function isErrorEnvelope(body: unknown): boolean {
  const b = body as {
    error?: { code?: unknown; message?: unknown; details?: unknown };
    metadata?: { request_id?: unknown };
  };
  return (
    typeof b?.error?.code === "string" &&
    typeof b.error.message === "string" &&
    Array.isArray(b.error.details) &&
    typeof b.metadata?.request_id === "string"
  );
}
