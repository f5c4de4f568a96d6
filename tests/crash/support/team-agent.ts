import {
  END,
  Message,
  Send,
  StateGraph,
  Subgraph,
  type AssistantMessage,
  type BaseState,
  type CompiledGraph,
} from "@tenxgraph/core";
import { supportAgent } from "@tenxgraph/core/testing";
import type { AgentParams, TeamPlan } from "./agent-params.js";
import { crashCompileOptions, crashTools, type AgentHooks } from "./support-agent.js";

/** The parent's state: what the workers reported, and what a Send hands one worker. */
export interface TeamState extends BaseState {
  reports: string[];
  order?: TeamPlan["billing"][number];
  orders?: string[];
}

/** A worker's state: its task, from the Send that started it. */
interface TaskState extends BaseState {
  order?: TeamPlan["billing"][number];
  orders?: string[];
}

/** The parent's nodes; `billing` and `mailer` are the subgraph workers. */
export const TEAM_NODES = {
  supervisor: "SUPERVISOR",
  billing: "billing",
  mailer: "mailer",
  summary: "SUMMARY",
} as const;

/**
 * The composition crash loop's graph: a supervisor hands each billing order to the billing
 * worker and every receipt to the mailer worker, all in one `Send` fan-out step; a join waits
 * for all of them, and the summary answers. Each worker is a compiled agent (a model and a tool
 * node with the crash suite's tools) run as a subgraph on a child thread, so its tool calls are
 * claimed, recorded and replayed in the child's ledger, and an interrupt inside it (approval,
 * an in-doubt call) pauses the parent.
 */
export function buildTeamAgent(params: AgentParams, hooks: AgentHooks): CompiledGraph<TeamState> {
  const plan = params.team!;
  const tools = crashTools(params, hooks);
  const billingWorker = supportAgent<TaskState>({ model: billingModel, tools });
  const mailerWorker = supportAgent<TaskState>({ model: mailerModel, tools });
  const reportOf = (child: TaskState) => ({ reports: [Message.text(child.messages.at(-1)!)] });
  return new StateGraph<TeamState>({
    reducers: { reports: (current: string[], update: string[]) => [...current, ...update] },
    initialState: { reports: [] },
  })
    .addNode(TEAM_NODES.supervisor, () =>
      Message.assistant(`Handing out ${plan.billing.length} charges and the receipts.`),
    )
    .addNode(
      TEAM_NODES.billing,
      new Subgraph<TeamState, TaskState>(billingWorker, {
        input: ({ order }) => ({
          order,
          messages: [Message.user(`bill order ${order!.order_id}`)],
        }),
        output: reportOf,
      }),
    )
    .addNode(
      TEAM_NODES.mailer,
      new Subgraph<TeamState, TaskState>(mailerWorker, {
        input: ({ orders }) => ({ orders, messages: [Message.user(`mail ${orders!.join(", ")}`)] }),
        output: reportOf,
      }),
    )
    .addNode(TEAM_NODES.summary, (state) => Message.assistant(teamAnswer(state.reports)))
    .addConditionalEdges(TEAM_NODES.supervisor, () => [
      ...plan.billing.map((order) => new Send(TEAM_NODES.billing, { order })),
      new Send(TEAM_NODES.mailer, { orders: plan.mail }),
    ])
    .addEdge([TEAM_NODES.billing, TEAM_NODES.mailer], TEAM_NODES.summary)
    .addEdge(TEAM_NODES.summary, END)
    .setEntryPoint(TEAM_NODES.supervisor)
    .compile(crashCompileOptions(params, hooks));
}

/** The reports the team must end with: one per Send, in Send order. */
export function expectedReports(plan: TeamPlan): string[] {
  return [...plan.billing.map((order) => billedText(order.order_id)), mailedText(plan.mail)];
}

/** The summary's answer from the reports. */
export function teamAnswer(reports: readonly string[]): string {
  return `Team done: ${reports.join("; ")}`;
}

const billedText = (orderId: string) => `billed ${orderId}`;
const mailedText = (orders: readonly string[]) => `mailed ${orders.join(", ")}`;

/** Looks the order up and charges it in one message of two calls, then reports. */
function billingModel(state: TaskState): AssistantMessage {
  const { order_id, amount_cents } = state.order!;
  if (state.messages.at(-1)?.role === "tool") return Message.assistant(billedText(order_id));
  return Message.assistant("", [
    call(1, "lookup_order", { order_id }),
    call(2, "charge_card", { order_id, amount_cents }),
  ]);
}

/** Sends every receipt in one message of parallel calls, then reports. */
function mailerModel(state: TaskState): AssistantMessage {
  const orders = state.orders!;
  if (state.messages.at(-1)?.role === "tool") return Message.assistant(mailedText(orders));
  return Message.assistant(
    "",
    orders.map((order_id, i) => call(i + 1, "send_receipt", { order_id })),
  );
}

function call(n: number, name: string, args: object) {
  return { id: `call_${n}`, name, arguments: JSON.stringify(args) };
}
