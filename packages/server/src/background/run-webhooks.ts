import type { Route } from "../http/route-table.js";
import { ApiError } from "../http/api-error.js";
import { ok } from "../http/envelope.js";
import { pathId } from "../http/request-input.js";
import { listDeliveries } from "../webhooks/webhook-deliverer.js";
import { webhookUrlProblem } from "../webhooks/webhook-settings.js";
import { webhookDeliveryListResponse } from "../wire/response-schemas.js";
import { findRun, requireRuns } from "./run-access.js";
import type { RunService, RunsContext } from "./runs-context.js";

/**
 * The webhook a new run reports to: its own `webhook`, else the server's `webhooks.url`, else
 * none. A URL that is not http(s), or whose host is not allowed, is a 422 and nothing is queued.
 */
export function runWebhook(runs: RunService, requested: string | undefined): string | null {
  const url = requested ?? runs.webhooks?.url ?? null;
  if (url === null) return null;
  const problem = webhookUrlProblem(url, runs.webhooks ?? null);
  if (problem === null) return url;
  throw new ApiError(422, "VALIDATION_ERROR", `webhook: ${problem}`, [
    { loc: ["body", "webhook"], msg: problem, type: "value_error" },
  ]);
}

/** A run's webhook deliveries: what was sent, how often, what the receiver answered. */
export const runWebhookRoutes: Route<RunsContext>[] = [
  {
    method: "get",
    path: "/v1/threads/{thread_id}/runs/{run_id}/webhooks",
    summary: "A background run's webhook deliveries: state, attempts, last answer, next try",
    responses: {
      200: {
        description: "The run's deliveries, oldest first",
        schema: webhookDeliveryListResponse,
      },
    },
    handler: async (c, ctx) => {
      const run = await findRun(ctx, c.get("user"), pathId(c, "thread_id"), pathId(c, "run_id"));
      const rows = await listDeliveries(requireRuns(ctx).store.pool, run.runId);
      return ok(c, {
        deliveries: rows.map((row) => ({
          event_id: row.event_id,
          type: row.type,
          url: row.url,
          state: row.state,
          attempts: row.attempts,
          last_status: row.last_status,
          last_error: row.last_error,
          next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
          delivered_at: row.delivered_at?.toISOString() ?? null,
          created_at: row.created_at.toISOString(),
        })),
      });
    },
  },
];
