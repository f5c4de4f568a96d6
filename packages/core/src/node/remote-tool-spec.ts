/**
 * A tool the caller runs (a client, a browser): name, description and JSON Schema parameters.
 * Plain data: a run carries its `RunConfig.remoteTools` as specs, and `ToolNode` makes them into
 * tools (`remoteTool`, in tools/).
 */
export interface RemoteToolSpec {
  /** Letters, digits, `_` and `-`, at most 64 characters. */
  name: string;
  description?: string;
  /** The arguments' JSON Schema, sent to the model as is (default: any object). */
  parameters?: Record<string, unknown>;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Throws a `TypeError` naming what is wrong with `spec`; checked before a run starts, so a bad
 * spec is refused before anything is read or written.
 */
export function checkRemoteToolSpec(spec: RemoteToolSpec): void {
  const name = (spec as Partial<RemoteToolSpec> | null)?.name;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw new TypeError(`remoteTool('${name}'): name must be 1-64 letters, digits, '_' or '-'`);
  }
  const { parameters, description } = spec;
  if (
    parameters !== undefined &&
    (typeof parameters !== "object" || parameters === null || Array.isArray(parameters))
  ) {
    throw new TypeError(`remoteTool('${name}'): parameters must be a JSON Schema object`);
  }
  if (description !== undefined && typeof description !== "string") {
    throw new TypeError(`remoteTool('${name}'): description must be a string`);
  }
}
