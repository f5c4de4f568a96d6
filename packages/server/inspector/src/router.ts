import { useEffect, useState } from "preact/hooks";

/** Where the server serves the page (vite's `base`). */
const BASE = "/inspector";

/** The page's views: the path under `/inspector` says which. */
export type Route =
  | { view: "threads" }
  | { view: "thread"; threadId: string }
  | { view: "graph" }
  | { view: "missing"; path: string };

/** The route of a path under `/inspector` (`/threads/abc` is thread `abc`). */
export function parseRoute(pathname: string): Route {
  const path = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  const trimmed = path.replace(/\/+$/, "");
  if (trimmed === "" || trimmed === "/threads") return { view: "threads" };
  if (trimmed === "/graph") return { view: "graph" };
  const thread = /^\/threads\/([^/]+)$/.exec(trimmed);
  if (thread) return { view: "thread", threadId: decodeURIComponent(thread[1]!) };
  return { view: "missing", path: pathname };
}

/** The URL of a route, for links. */
export function hrefOf(route: Exclude<Route, { view: "missing" }>): string {
  switch (route.view) {
    case "threads":
      return `${BASE}/`;
    case "graph":
      return `${BASE}/graph`;
    case "thread":
      return `${BASE}/threads/${encodeURIComponent(route.threadId)}`;
  }
}

/** Goes to `href` without reloading the page. */
export function navigate(href: string): void {
  window.history.pushState(null, "", href);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

/** The current route, updated on links and the browser's back and forward. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.pathname));
  useEffect(() => {
    const update = () => setRoute(parseRoute(window.location.pathname));
    window.addEventListener("popstate", update);
    return () => window.removeEventListener("popstate", update);
  }, []);
  return route;
}

/** Click handler for in-page links: plain clicks navigate here, modified clicks open as usual. */
export function followLink(event: MouseEvent): void {
  const anchor = (event.currentTarget as HTMLAnchorElement | null) ?? null;
  if (!anchor || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  event.preventDefault();
  navigate(anchor.getAttribute("href") ?? `${BASE}/`);
}
