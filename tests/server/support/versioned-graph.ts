import {
  END,
  interrupt,
  Message,
  StateGraph,
  ToolNode,
  tool,
  type BaseState,
  type Logger,
} from "@tenxgraph/core";
import type { Checkpointer } from "@tenxgraph/core/storage";
import { supportModel, supportTools } from "@tenxgraph/core/testing";
import { appendEffect } from "../../support/effect-log.js";
import type { TestGraphParams } from "./test-graph.js";

/**
 * Which release of the support agent a process runs:
 * - `1`: the support agent as `buildTestGraph` has it (`charge_card`), version "1";
 * - `2`: `charge_card` renamed `charge_payment`, an AUDIT node after the tools, version "2",
 *   with the migration from "1";
 * - `"2-unmigrated"`: release 2 without its migration.
 */
export type Release = 1 | 2 | "2-unmigrated";

/** What a process of one release does. */
export interface VersionedGraphParams extends TestGraphParams {
  release: Release;
  /** The charge asks for approval (`interrupt`) before it charges. */
  approveCharges?: boolean;
}

/**
 * The support agent of one release (see {@link Release}) on `checkpointer`: the same model,
 * which names the charge tool of its release, and the same effects in the effect log.
 */
export function buildVersionedGraph(
  params: VersionedGraphParams,
  checkpointer: Checkpointer,
  logger: Logger,
) {
  const outside = (line: string) => appendEffect(params.effectLog, { line, pid: process.pid });
  const [lookupOrder, chargeCard, sendReceipt] = supportTools({
    outside,
    mailerDelayMs: params.mailerDelayMs ?? 0,
  });
  const release2 = params.release !== 1;
  const chargeName = release2 ? "charge_payment" : "charge_card";
  const charge = tool({
    ...chargeCard,
    name: chargeName,
    execute(args, ctx) {
      if (params.approveCharges && interrupt(args, { message: "Charge?" }) !== true) {
        return "Not approved";
      }
      return chargeCard.execute(args, ctx);
    },
  });
  const model = (state: BaseState) => {
    const reply = supportModel(state);
    const toolCalls = reply.toolCalls?.map((call) =>
      call.name === "charge_card" ? { ...call, name: chargeName } : call,
    );
    return toolCalls ? { ...reply, toolCalls } : reply;
  };
  const graph = new StateGraph<BaseState & { audits?: number }>()
    .addNode("MAIN", model)
    .addNode("TOOL", new ToolNode([lookupOrder, charge, sendReceipt]))
    .addConditionalEdges("MAIN", (s) => {
      const last = s.messages.at(-1);
      return last?.role === "assistant" && last.toolCalls?.length ? "TOOL" : END;
    })
    .setEntryPoint("MAIN");
  const options = { checkpointer, logger, stopPollIntervalMs: 250, claimStaleAfterMs: 1000 };
  if (!release2) return graph.addEdge("TOOL", "MAIN").compile({ ...options, version: "1" });
  return graph
    .addNode("AUDIT", (s) => ({ audits: (s.audits ?? 0) + 1 }))
    .addEdge("TOOL", "AUDIT")
    .addEdge("AUDIT", "MAIN")
    .compile({
      ...options,
      version: "2",
      migrations:
        params.release === 2 ? [{ from: "1", tools: { charge_card: "charge_payment" } }] : [],
    });
}

/** The user's message asking to charge `order`. */
export function chargeRequest(order: number) {
  return Message.user(`charge order ${order}`);
}
