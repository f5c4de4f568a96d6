import {
  ROOT_CONTEXT,
  context,
  propagation,
  trace,
  type Context,
  type TextMapGetter,
} from "@opentelemetry/api";

/** Reads a fetch `Headers` for the propagator. */
const HEADERS: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/**
 * The trace context a request carries (`traceparent`, `tracestate` with the W3C propagator),
 * read through the registered OpenTelemetry propagator: a run the request starts is a child of
 * the caller's span. When HTTP instrumentation already made the request a span, that span is
 * active and its context is used. Without an SDK it is the empty root context.
 */
export function requestTraceContext(request: Request): Context {
  const active = context.active();
  if (trace.getSpan(active)) return active;
  return propagation.extract(ROOT_CONTEXT, request.headers, HEADERS);
}

/**
 * `context` as the headers that carry it (`{ traceparent, tracestate }`), for a run queued now
 * and run later by a worker; `undefined` when there is nothing to carry.
 */
export function traceCarrier(traceContext: Context): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(traceContext, carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** The context a queued run's carrier holds: its spans join the trace of the request that queued it. */
export function carriedTraceContext(carrier: Record<string, string> | undefined): Context {
  return carrier ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT;
}
