/** Who made a request: the authenticated user's id and claims (`{}` claims without auth). */
export interface AuthUser {
  /** The user id: `user_id` claim, else the configured claim, else `sub`; "anonymous" without auth. */
  id: string;
  claims: Record<string, unknown>;
  /** False when the server runs without auth: ownership is not enforced then. */
  authenticated: boolean;
}

/** Hono's environment for this server: what middleware puts on the context. */
export interface ServerEnv {
  Variables: {
    requestId: string;
    user: AuthUser;
  };
}
