import type { Logger } from "@tenxgraph/core";

/** The warnings and errors stores logged, for the report; other levels are dropped. */
export class WarningLog {
  readonly messages: string[] = [];
  readonly logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: (_fields, message) => this.messages.push(`warn: ${message ?? ""}`),
    error: (_fields, message) => this.messages.push(`error: ${message ?? ""}`),
  };
}
