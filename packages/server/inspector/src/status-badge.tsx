/** A thread's or run's status as a coloured badge. */
export function StatusBadge(props: { status: string }) {
  return <span class={`badge status-${props.status}`}>{props.status}</span>;
}
