import type { ErrorCode } from "../errors/codes.js";
import { TenxgraphError } from "../errors/tenxgraph-error.js";

/** An error of the functional API (`entrypoint`, `task`): its code says which (`FUNC_001`, …). */
export class FuncError extends TenxgraphError {
  constructor(
    code: Extract<ErrorCode, `FUNC_${string}`>,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}
