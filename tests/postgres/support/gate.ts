/** A promise the test opens when it is ready: a tool or node waits on it at a known point. */
export interface Gate {
  /** Resolves once the gate is open. */
  readonly opened: Promise<void>;
  /** Resolves once something waits at the gate. */
  readonly reached: Promise<void>;
  /** Called by the waiter: marks the gate reached and waits until it opens. */
  pass(): Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open!: () => void;
  let reach!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const reached = new Promise<void>((resolve) => (reach = resolve));
  return {
    opened,
    reached,
    pass: () => {
      reach();
      return opened;
    },
    open,
  };
}
