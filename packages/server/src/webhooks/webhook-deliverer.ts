import type { Logger } from "@tenxgraph/core";
import type pg from "pg";
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from "./webhook-signature.js";
import { retryDelayMs, webhookUrlProblem, type WebhookSettings } from "./webhook-settings.js";

/** A delivery taken for one attempt. */
interface DueDelivery {
  event_id: string;
  url: string;
  body: unknown;
  attempts: number;
}

/** How one attempt went: the receiver's status (none when it was not reached) and why not 2xx. */
interface AttemptResult {
  status: number | null;
  error: string | null;
}

/**
 * Sends the webhook outbox (`tenxgraph_webhook_deliveries`, filled by the runs' own
 * transactions) until each delivery gets a 2xx, with exponential backoff between attempts.
 * Any number of deliverers may run on one database: an attempt takes its row with `SKIP
 * LOCKED` and pushes its next try past its time limit first, so a deliverer that dies mid-send
 * leaves the row due again soon after, for any deliverer. At least once: a receiver dedupes on
 * the event id, the same on every attempt.
 */
export class WebhookDeliverer {
  readonly #pool: pg.Pool;
  readonly #settings: WebhookSettings;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | null = null;
  #pass: Promise<void> | null = null;

  constructor(options: { pool: pg.Pool; settings: WebhookSettings; logger: Logger }) {
    this.#pool = options.pool;
    this.#settings = options.settings;
    this.#logger = options.logger;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      this.#pass ??= this.deliverDue()
        .then(() => undefined)
        .catch((error: unknown) =>
          this.#logger.warn({ err: error }, "Webhook delivery pass failed"),
        )
        .finally(() => (this.#pass = null));
    }, this.#settings.pollIntervalMs ?? 500);
    this.#timer.unref();
  }

  /** Stops looking for deliveries; resolves once the attempts in flight have been recorded. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#pass;
  }

  /** One pass: takes the deliveries due and attempts each once. Returns how many it attempted. */
  async deliverDue(limit = 20): Promise<number> {
    const timeoutMs = this.#settings.timeoutMs ?? 10_000;
    // The next try is pushed past this attempt's time limit before it starts: if this process
    // dies mid-send, the row is due again once that passes.
    const { rows } = await this.#pool.query<DueDelivery>(
      `UPDATE tenxgraph_webhook_deliveries AS d
          SET attempts = d.attempts + 1,
              next_attempt_at = now() + make_interval(secs => $2 / 1000.0)
        WHERE d.event_id IN (
          SELECT event_id FROM tenxgraph_webhook_deliveries
           WHERE state = 'pending' AND next_attempt_at <= now()
           ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING d.event_id, d.url, d.body, d.attempts`,
      [limit, timeoutMs * 2],
    );
    await Promise.all(rows.map((row) => this.#attempt(row, timeoutMs)));
    return rows.length;
  }

  async #attempt(delivery: DueDelivery, timeoutMs: number): Promise<void> {
    const result = await this.#send(delivery, timeoutMs);
    const delivered = result.status !== null && result.status >= 200 && result.status < 300;
    const exhausted = delivery.attempts >= (this.#settings.maxAttempts ?? 10);
    const state = delivered ? "delivered" : exhausted ? "failed" : "pending";
    await this.#pool.query(
      `UPDATE tenxgraph_webhook_deliveries
          SET state = $2, last_status = $3, last_error = $4,
              next_attempt_at = now() + make_interval(secs => $5 / 1000.0),
              delivered_at = CASE WHEN $2 = 'delivered' THEN now() END
        WHERE event_id = $1 AND attempts = $6`,
      [
        delivery.event_id,
        state,
        result.status,
        result.error,
        retryDelayMs(this.#settings, delivery.attempts),
        delivery.attempts,
      ],
    );
    if (!delivered) {
      this.#logger.warn(
        { eventId: delivery.event_id, attempts: delivery.attempts, state, ...result },
        "Webhook delivery failed",
      );
    }
  }

  async #send(delivery: DueDelivery, timeoutMs: number): Promise<AttemptResult> {
    // Checked again at send time: the allowed hosts may have changed since the run was queued.
    const problem = webhookUrlProblem(delivery.url, this.#settings);
    if (problem) return { status: null, error: problem };
    const body = JSON.stringify(delivery.body);
    const signature = signWebhook(this.#settings.secret, body, Math.floor(Date.now() / 1000));
    try {
      const response = await fetch(delivery.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          [SIGNATURE_HEADER]: signature,
          [EVENT_ID_HEADER]: delivery.event_id,
        },
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body?.cancel();
      return {
        status: response.status,
        error: response.ok ? null : `the receiver answered ${response.status}`,
      };
    } catch (error) {
      return { status: null, error: error instanceof Error ? error.message : String(error) };
    }
  }
}

/** A delivery's state as `GET /v1/threads/{id}/runs/{run_id}/webhooks` reads it. */
export interface WebhookDeliveryRow {
  event_id: string;
  url: string;
  type: string;
  state: "pending" | "delivered" | "failed";
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
}

/** The run's deliveries, oldest first. */
export async function listDeliveries(pool: pg.Pool, runId: string): Promise<WebhookDeliveryRow[]> {
  const { rows } = await pool.query<WebhookDeliveryRow>(
    `SELECT event_id, url, body->>'type' AS type, state, attempts, last_status, last_error,
            CASE WHEN state = 'pending' THEN next_attempt_at END AS next_attempt_at,
            delivered_at, created_at
       FROM tenxgraph_webhook_deliveries WHERE run_id = $1 ORDER BY created_at, event_id`,
    [runId],
  );
  return rows;
}
