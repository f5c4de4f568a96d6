/** What the server tells the page at `/inspector/settings.json` (see `inspector-routes.ts`). */
export interface InspectorSettings {
  /** A URL with `{traceId}` in it, where a run's trace is shown; `null`: the id as text. */
  traceUrl: string | null;
}

/** No settings read (yet, or the server answered none): trace ids show as text. */
export const NO_SETTINGS: InspectorSettings = Object.freeze({ traceUrl: null });

/** The page's settings; {@link NO_SETTINGS} when the server does not answer them. */
export async function loadSettings(signal?: AbortSignal): Promise<InspectorSettings> {
  try {
    const response = await fetch("/inspector/settings.json", signal ? { signal } : {});
    if (!response.ok) return NO_SETTINGS;
    const body = (await response.json()) as { trace_url?: unknown };
    return { traceUrl: typeof body.trace_url === "string" ? body.trace_url : null };
  } catch {
    return NO_SETTINGS;
  }
}

/**
 * Where `traceId` is shown: the template with `{traceId}` replaced, or `null` without a
 * template. An id that is not a trace id (32 hex digits) is never put in a link.
 */
export function traceHref(template: string | null, traceId: string): string | null {
  if (template === null || !/^[0-9a-f]{32}$/.test(traceId)) return null;
  return template.replaceAll("{traceId}", traceId);
}
