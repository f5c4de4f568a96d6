/**
 * Server-wide webhook settings (`webhooks` in tenxgraph.json): the secret every delivery is
 * signed with, a default URL for runs that name none, which hosts may be called, and how
 * deliveries are retried.
 */
export interface WebhookSettings {
  /** The HMAC-SHA256 key of the `tenxgraph-signature` header. */
  secret: string;
  /** Where runs that name no `webhook` of their own report (default: no webhook). */
  url?: string | null;
  /**
   * The only hosts (`host` or `host:port`, as in the URL) a webhook may call; absent: any.
   * The server calls these URLs itself, so without a list a user can make it call anything it
   * can reach (an internal service, a metadata endpoint).
   */
  allowHosts?: readonly string[] | null;
  /** Attempts before a delivery is given up as `failed` (default 10). */
  maxAttempts?: number;
  /** The first retry's delay; each next one doubles, up to `retryMaxMs` (default 1000 ms). */
  retryBaseMs?: number;
  /** The longest delay between two attempts (default 1 hour). */
  retryMaxMs?: number;
  /** One attempt's time limit (default 10 000 ms). */
  timeoutMs?: number;
  /** How often a deliverer looks for deliveries due (default 500 ms). */
  pollIntervalMs?: number;
}

/** Why `url` cannot be a webhook under `settings`, or `null` when it can. */
export function webhookUrlProblem(url: string, settings: WebhookSettings | null): string | null {
  if (!settings) {
    return "webhooks are not configured on this server (set webhooks.secret in tenxgraph.json)";
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `'${url}' is not a URL`;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return `a webhook must be an http or https URL, got '${parsed.protocol}'`;
  }
  if (settings.allowHosts && !settings.allowHosts.includes(parsed.host)) {
    return `host '${parsed.host}' is not in webhooks.allow_hosts`;
  }
  return null;
}

/** The delay before attempt `attempts + 1`: exponential from `retryBaseMs`, capped. */
export function retryDelayMs(settings: WebhookSettings, attempts: number): number {
  const base = settings.retryBaseMs ?? 1000;
  const max = settings.retryMaxMs ?? 3_600_000;
  return Math.min(max, base * 2 ** Math.max(0, attempts - 1));
}
