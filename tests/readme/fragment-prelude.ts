/**
 * The names a ` ```ts fragment ` block of the docs may use without declaring them: what its page
 * set up before it (the running example's `app`, `threadId`, `client`, …) and the library's
 * common exports, so a fragment needs no imports. Declarations only: fragments are type-checked
 * against them (tests/readme/doc-blocks-typecheck.test.ts), never run.
 *
 * Left out of tsconfig.json on purpose: as globals they would hide a missing import in any test.
 * A whole program (` ```ts `) may not use them; the type-check test fails if one does.
 */
import type * as core from "@tenxgraph/core";
import type * as clientPackage from "@tenxgraph/client";
import type * as models from "@tenxgraph/models";
import type * as pg from "@tenxgraph/postgres";
import type * as sqlite from "@tenxgraph/sqlite";
import type { Checkpointer, HistoryOptions } from "@tenxgraph/core/storage";
import type * as zod from "zod";

declare global {
  // The library, as if imported.
  var Message: typeof core.Message;
  type Message = core.Message;
  var StateGraph: typeof core.StateGraph;
  var END: typeof core.END;
  var ToolNode: typeof core.ToolNode;
  var tool: typeof core.tool;
  var interrupt: typeof core.interrupt;
  var Command: typeof core.Command;
  var trimMessages: typeof core.trimMessages;
  var z: typeof zod.z;
  var Agent: typeof models.Agent;
  var SqliteCheckpointer: typeof sqlite.SqliteCheckpointer;
  var PgCheckpointer: typeof pg.PgCheckpointer;
  var isClientError: typeof clientPackage.isClientError;

  // The running example: a support agent whose state keeps notes and a summary.
  interface SupportState extends core.BaseState {
    notes: string[];
    summary: string;
  }
  var graph: core.StateGraph<core.BaseState, string>;
  var app: core.CompiledGraph<SupportState>;
  var threadId: string;
  var config: { threadId: string };
  var input: { messages: core.Message[] };
  var checkpointer: Checkpointer;
  var path: string;
  var postgresDsn: string;
  var render: (messages: core.Message[]) => void;
  var lookupOrder: core.AnyTool;
  var chargeCard: core.AnyTool;
  var sendReceipt: core.AnyTool;

  // docs/history.md: editing messages.
  var call: core.ToolCall;
  var draft: core.AssistantMessage;
  var oldSummary: core.Message;
  var summary: string;

  // docs/tools-and-ledger.md and docs/interrupts-deadlines-stop.md: a payment provider.
  interface Refunds extends core.BaseState {
    refunded: number;
    tags: string[];
  }
  var schema: zod.z.ZodObject<{ order_id: zod.z.ZodString; amount_cents: zod.z.ZodNumber }>;
  var payments: {
    charge(
      args: { order_id: string; amount_cents: number },
      options: { key: string; signal: AbortSignal },
    ): Promise<{ amount_cents: number }>;
    refund(
      args: { order_id: string; amount_cents: number },
      options: { key: string },
    ): Promise<void>;
    findCharge(key: string): Promise<string | undefined>;
  };
  var issueRefund: (args: { order_id: string; amount_cents: number }) => Promise<string>;

  // docs/storage.md: your own store.
  interface MyCheckpointer extends Checkpointer {
    openAnother(): Promise<MyCheckpointer>;
  }
  var MyCheckpointer: new (options: { path: string } & HistoryOptions) => MyCheckpointer;
  var freshPath: () => string;

  // The client's pages.
  var client: clientPackage.TenxgraphClient;
  var getJwt: () => string;
  var session: { jwt: string };
  var lookUp: (name: string, args: unknown) => unknown;
  var paymentProvider: { lookup(key: string): Promise<{ amount: number } | null> };
  var retry: () => Promise<void>;
}
