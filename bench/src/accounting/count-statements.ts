import Database from "better-sqlite3";

type Method = (this: unknown, ...args: unknown[]) => unknown;
type Methods = Record<string, Method>;

/** Every SQL statement executed while a body ran, in total and by statement text. */
export interface StatementCount<T> {
  result: T;
  statements: number;
  /** Executions per statement, keyed by the statement's first words. */
  bySql: Record<string, number>;
}

/** A better-sqlite3 connection, from whichever copy of the driver opened it. */
interface Connection {
  prepare(sql: string): object;
}

/**
 * Runs `body` while counting every statement better-sqlite3 executes in this process: each
 * `run`/`get`/`all`/`iterate` of a prepared statement (which includes the BEGIN and COMMIT of
 * `db.transaction`) and each `exec`/`pragma`. The checkpointer opens its own connection and
 * exposes no statement hook, so the count wraps the driver's prototypes, which every
 * connection of a copy of the driver shares; they are restored when the body settles.
 * `connections` names connections opened by other copies of the driver (LangGraph's
 * SqliteSaver installs its own in `bench/langgraph`), whose prototypes are wrapped too.
 */
export async function countStatements<T>(
  body: () => Promise<T>,
  connections: Connection[] = [],
): Promise<StatementCount<T>> {
  const bySql: Record<string, number> = {};
  let statements = 0;
  const counted = (original: Method, sqlOf: (self: unknown, args: unknown[]) => string): Method =>
    function (this: unknown, ...args: unknown[]) {
      const key = shorten(sqlOf(this, args));
      bySql[key] = (bySql[key] ?? 0) + 1;
      statements++;
      return original.apply(this, args);
    };
  const drivers = new Set([Database.prototype as unknown as Methods]);
  const statementPrototypes = new Set([statementPrototype()]);
  for (const connection of connections) {
    drivers.add(Object.getPrototypeOf(connection) as Methods);
    statementPrototypes.add(Object.getPrototypeOf(connection.prepare("SELECT 1")) as Methods);
  }
  const restore = [
    ...[...statementPrototypes].flatMap((prototype) =>
      wrap(prototype, ["run", "get", "all", "iterate"], (_name, original) =>
        counted(original, (self) => (self as Database.Statement).source),
      ),
    ),
    ...[...drivers].flatMap((prototype) =>
      wrap(prototype, ["exec", "pragma"], (name, original) =>
        counted(original, (_self, args) => `${name} ${String(args[0])}`),
      ),
    ),
  ];
  try {
    return { result: await body(), statements, bySql };
  } finally {
    for (const undo of restore) undo();
  }
}

/** The prototype of better-sqlite3's native Statement class, found through a throwaway one. */
function statementPrototype(): Methods {
  const probe = new Database(":memory:");
  try {
    return Object.getPrototypeOf(probe.prepare("SELECT 1")) as Methods;
  } finally {
    probe.close();
  }
}

function wrap(
  target: Methods,
  names: string[],
  make: (name: string, original: Method) => Method,
): (() => void)[] {
  return names.map((name) => {
    const original = target[name]!;
    target[name] = make(name, original);
    return () => {
      target[name] = original;
    };
  });
}

/** A statement's first words, whitespace collapsed: enough to tell the checkpointer's apart. */
function shorten(sql: string): string {
  return sql.replace(/\s+/g, " ").trim().slice(0, 60);
}
