/** One event of a run's SSE stream: its id and its parsed data. */
export interface RunStreamEvent {
  id: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  event: any;
}

/**
 * Reads `GET /v1/threads/{thread}/runs/{run}/stream` as an EventSource would: from
 * `lastEventId` (sent as `Last-Event-ID`), until the server ends the stream or `stopAfter`
 * events have arrived (then the connection is dropped, as by a flaky network).
 */
export async function readRunStream(
  base: string,
  threadId: string,
  runId: string,
  options: { lastEventId?: number; stopAfter?: number; token?: string } = {},
): Promise<RunStreamEvent[]> {
  const abort = new AbortController();
  const response = await fetch(`${base}/v1/threads/${threadId}/runs/${runId}/stream`, {
    headers: {
      accept: "text/event-stream",
      ...(options.lastEventId === undefined
        ? {}
        : { "last-event-id": String(options.lastEventId) }),
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    },
    signal: abort.signal,
  });
  if (response.status !== 200) {
    throw new Error(`stream answered ${response.status}: ${await response.text()}`);
  }
  const events: RunStreamEvent[] = [];
  const decoder = new TextDecoder();
  let pending = "";
  try {
    for await (const chunk of response.body!) {
      pending += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = pending.indexOf("\n\n")) >= 0) {
        const frame = pending.slice(0, end);
        pending = pending.slice(end + 2);
        const parsed = parseFrame(frame);
        if (!parsed) continue;
        events.push(parsed);
        if (options.stopAfter !== undefined && events.length >= options.stopAfter) {
          abort.abort();
          return events;
        }
      }
    }
  } catch (error) {
    if (!abort.signal.aborted) throw error;
  }
  return events;
}

function parseFrame(frame: string): RunStreamEvent | null {
  let id: number | null = null;
  let data = "";
  for (const line of frame.split("\n")) {
    if (line.startsWith("id: ")) id = Number(line.slice(4));
    else if (line.startsWith("data: ")) data += line.slice(6);
  }
  if (id === null || data === "") return null;
  return { id, event: JSON.parse(data) };
}
