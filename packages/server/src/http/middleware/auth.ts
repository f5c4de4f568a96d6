import type { MiddlewareHandler } from "hono";
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { ApiError } from "../api-error.js";
import { idProblem } from "../request-limits.js";
import { INSPECTOR_PATH } from "../inspector-routes.js";
import type { AuthUser, ServerEnv } from "../server-env.js";

/** JWT settings: a shared secret (`JWT_SECRET_KEY`, HS256 by default) or a JWKS URL (RS256/ES256). */
export interface JwtAuthConfig {
  method: "jwt";
  jwks_url?: string;
  issuer?: string;
  audience?: string;
  /** The claim holding the user id when there is no `user_id` claim (then `sub`). */
  user_claim?: string;
  /** The HMAC secret; default `JWT_SECRET_KEY` from the environment. */
  secret?: string;
  /** Default `JWT_ALGORITHM` from the environment, else HS256. */
  algorithm?: string;
}

/** Your own check: the user of a request, or `null` to refuse it with a 401. */
export type Authenticate = (
  request: Request,
) =>
  | { id: string; claims?: Record<string, unknown> }
  | null
  | Promise<{ id: string; claims?: Record<string, unknown> } | null>;

/** `auth` of `createApp`: none, JWT, or a custom function. */
export type AuthOption =
  null | "jwt" | JwtAuthConfig | { method: "custom"; authenticate: Authenticate };

const ANONYMOUS: AuthUser = { id: "anonymous", claims: {}, authenticated: false };
/** Routes anyone may call. */
const PUBLIC_PATHS = new Set(["/ping", "/openapi.json", INSPECTOR_PATH]);

/** The inspector's files are public: they hold no data, and the page asks for a token itself. */
function isPublic(path: string): boolean {
  return PUBLIC_PATHS.has(path) || path.startsWith(`${INSPECTOR_PATH}/`);
}

/**
 * Sets `c.get("user")` for every request: the authenticated user, or "anonymous" without auth.
 * A missing (`MISSING_TOKEN`), malformed, badly signed or expired token is a 401 with the
 * error envelope.
 * `authenticate` comes from {@link requestAuthenticator} (`null` without auth), so HTTP and the
 * WebSocket share one.
 */
export function authMiddleware(
  authenticate: ((request: Request) => Promise<AuthUser>) | null,
): MiddlewareHandler<ServerEnv> {
  return async function auth(c, next) {
    if (authenticate === null || c.req.method === "OPTIONS" || isPublic(c.req.path)) {
      c.set("user", ANONYMOUS);
      return next();
    }
    c.set("user", await authenticate(c.req.raw));
    return next();
  };
}

/**
 * The user of a request as the middleware finds it, for transports outside Hono's routing (the
 * WebSocket): "anonymous" without auth, else the checked token's user, else a 401 `ApiError`.
 */
export function requestAuthenticator(
  option: AuthOption | undefined,
): (request: Request) => Promise<AuthUser> {
  return option ? authenticator(option) : async () => ANONYMOUS;
}

function authenticator(option: Exclude<AuthOption, null>): (request: Request) => Promise<AuthUser> {
  if (typeof option === "object" && option.method === "custom") {
    return async (request) => {
      const user = await option.authenticate(request);
      if (!user || typeof user.id !== "string" || user.id === "") {
        throw new ApiError(401, "INVALID_TOKEN", "Authentication failed");
      }
      return { id: usableUserId(user.id), claims: user.claims ?? {}, authenticated: true };
    };
  }
  const config: JwtAuthConfig = option === "jwt" ? { method: "jwt" } : option;
  const verify = jwtVerifier(config);
  return async (request) => {
    const claims = await verify(bearerToken(request));
    const id = userIdOf(claims, config.user_claim);
    if (id === null)
      throw new ApiError(
        401,
        "INVALID_TOKEN",
        "The token names no user (user_id, the configured claim, or sub)",
      );
    return { id: usableUserId(id), claims: claims as Record<string, unknown>, authenticated: true };
  };
}

/**
 * The request's bearer token. No token at all is `MISSING_TOKEN` (10xGraph's server says
 * `REVOKED_TOKEN`, which reads as if a token had been withdrawn); a credential of another
 * scheme, or a malformed header, is `INVALID_TOKEN`. Both are 401.
 */
function bearerToken(request: Request): string {
  const header = (request.headers.get("authorization") ?? "").trim();
  if (header === "" || /^Bearer$/i.test(header)) {
    throw new ApiError(
      401,
      "MISSING_TOKEN",
      "Missing bearer token: send Authorization: Bearer <token>",
    );
  }
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) {
    throw new ApiError(
      401,
      "INVALID_TOKEN",
      "The Authorization header is not a bearer token: send Authorization: Bearer <token>",
    );
  }
  return match[1]!;
}

/** A user id every store can hold as a thread's owner; else the token is refused (401). */
function usableUserId(id: string): string {
  const problem = idProblem(id);
  if (problem === null) return id;
  throw new ApiError(401, "INVALID_TOKEN", `The token's user id cannot be used: it ${problem}`);
}

function jwtVerifier(config: JwtAuthConfig): (token: string) => Promise<JWTPayload> {
  const options = {
    ...(config.issuer ? { issuer: config.issuer } : {}),
    ...(config.audience ? { audience: config.audience } : {}),
  };
  let key: Uint8Array | JWTVerifyGetKey;
  let algorithms: string[];
  if (config.jwks_url) {
    key = createRemoteJWKSet(new URL(config.jwks_url));
    algorithms = ["RS256", "ES256", "RS384", "RS512", "ES384", "PS256", "EdDSA"];
  } else {
    const secret = config.secret ?? process.env.JWT_SECRET_KEY;
    if (!secret) throw new Error('auth is "jwt" but JWT_SECRET_KEY is not set (or give jwks_url)');
    key = new TextEncoder().encode(secret);
    algorithms = [config.algorithm ?? process.env.JWT_ALGORITHM ?? "HS256"];
  }
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, key as Uint8Array, { ...options, algorithms });
      return payload;
    } catch (error) {
      if (error instanceof errors.JWTExpired)
        throw new ApiError(401, "EXPIRED_TOKEN", "The token has expired");
      throw new ApiError(401, "INVALID_TOKEN", `Invalid token: ${(error as Error).message}`);
    }
  };
}

/** `user_id`, else the configured claim, else `sub`; only non-empty strings (or numbers) count. */
function userIdOf(claims: JWTPayload, userClaim: string | undefined): string | null {
  for (const name of ["user_id", userClaim, "sub"]) {
    if (!name) continue;
    const value = claims[name];
    if ((typeof value === "string" && value !== "") || typeof value === "number")
      return String(value);
  }
  return null;
}
