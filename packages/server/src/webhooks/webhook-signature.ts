import { createHmac, timingSafeEqual } from "node:crypto";

/** The header that carries a delivery's signature: `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export const SIGNATURE_HEADER = "tenxgraph-signature";
/** The header that carries the event's id, the same on every retry: receivers dedupe on it. */
export const EVENT_ID_HEADER = "tenxgraph-event-id";

/**
 * The signature header's value for `body` sent at `unixSeconds`: an HMAC-SHA256 under `secret`
 * of `"<t>.<body>"`, so a receiver can check both the body and how old it is.
 */
export function signWebhook(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}

/**
 * Whether `header` is a valid signature of `body` under `secret`, made at most `toleranceSeconds`
 * before `nowSeconds` (a replayed old delivery is refused). Constant-time comparison.
 */
export function verifyWebhook(
  secret: string,
  body: string,
  header: string,
  nowSeconds = Math.floor(Date.now() / 1000),
  toleranceSeconds = 300,
): boolean {
  const fields = new Map(
    header.split(",").map((part) => {
      const at = part.indexOf("=");
      return [part.slice(0, at).trim(), part.slice(at + 1).trim()] as const;
    }),
  );
  const t = Number(fields.get("t"));
  const given = fields.get("v1") ?? "";
  if (!Number.isSafeInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
  return (
    given.length === expected.length &&
    timingSafeEqual(Buffer.from(given, "utf8"), Buffer.from(expected, "utf8"))
  );
}
