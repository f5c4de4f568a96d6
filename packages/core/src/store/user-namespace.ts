/** The user of a run without one (`ctx.userId === null`), as a server without auth names it. */
export const ANONYMOUS_USER = "anonymous";

/**
 * The namespace of a user's items, `[<user label>, ...labels]`: where the server keeps what a
 * user reads and writes over HTTP (`/v1/store`, LangGraph's `/store`), so a node shares items
 * with its run's user by writing here. A user id may hold `.`, which a label cannot: `%`
 * becomes `%25` and `.` becomes `%2E`, so no two users share a label.
 *
 * @example
 * await ctx.store.put(userNamespace(ctx.userId, "prefs"), "theme", { color: "blue" });
 * // GET /v1/store/items?namespace=prefs&key=theme, as that user, reads it.
 */
export function userNamespace(userId: string | null, ...labels: string[]): string[] {
  const id = userId ?? ANONYMOUS_USER;
  return [id.replaceAll("%", "%25").replaceAll(".", "%2E"), ...labels];
}
