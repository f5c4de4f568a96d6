import { CronExpressionParser } from "cron-parser";

/**
 * Why `schedule` in `timezone` is not a schedule, or `null` when it is. Five fields (minute
 * first), or six with seconds first, as `cron-parser` reads them.
 */
export function scheduleProblem(schedule: string, timezone: string): string | null {
  try {
    new Intl.DateTimeFormat("en", { timeZone: timezone });
  } catch {
    return `timezone '${timezone}' is not an IANA time zone (e.g. "Europe/Paris", "UTC")`;
  }
  try {
    CronExpressionParser.parse(schedule, { tz: timezone, strict: false });
    return null;
  } catch (error) {
    return `schedule '${schedule}' is not a cron expression: ${(error as Error).message}`;
  }
}

/** The schedule's first tick strictly after `after`. */
export function nextTick(schedule: string, timezone: string, after: Date): Date {
  return CronExpressionParser.parse(schedule, { tz: timezone, currentDate: after }).next().toDate();
}

/**
 * The schedule's latest tick at or before `now`: when ticks were missed (every scheduler was
 * down), the one run they owe is this one.
 */
export function latestTick(schedule: string, timezone: string, now: Date): Date {
  const justAfter = new Date(now.getTime() + 1);
  return CronExpressionParser.parse(schedule, { tz: timezone, currentDate: justAfter })
    .prev()
    .toDate();
}
