import type { StreamEvent } from "@tenxgraph/core";

export { recordingLogger } from "@tenxgraph/core/testing";

/** Every event of a stream, and the error it ended with, if any. */
export async function collect(
  stream: AsyncIterable<StreamEvent>,
): Promise<{ events: StreamEvent[]; error: unknown }> {
  const events: StreamEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}
