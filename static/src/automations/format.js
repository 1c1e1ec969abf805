// How the automations page words a step, a firing time and a firing's outcome: plain
// functions, tested beside the others.

export function stepLine(step) {
  if (step.tool) return `${step.id}: tool ${step.tool}`;
  const prompt = step.prompt ?? "";
  return `${step.id}: prompt “${prompt.length > 120 ? `${prompt.slice(0, 119)}…` : prompt}”`;
}

export function firingTime(iso) {
  if (!iso) return "none";
  return new Date(iso).toLocaleString();
}

/// The last firing's outcome; its time read in `zone` (the schedule's) when given.
export function outcomeLine(firing, zone) {
  if (!firing) return "not fired yet";
  const at = zone ? zonedTime(firing.due_at, zone, { seconds: new Date(firing.due_at).getUTCSeconds() !== 0 }) : firingTime(firing.due_at);
  if (firing.status === "failed") return `failed at ${at}: ${firing.error ?? ""}`;
  if (firing.status === "skipped") return `skipped at ${at}: ${firing.error ?? ""}`;
  return `${firing.status} at ${at}`;
}

/// A time as read in `zone` (a schedule's), with the weekday: "Mon, 2 Mar 2026, 08:00".
export function zonedTime(iso, zone, { seconds = false } = {}) {
  if (!iso) return "none";
  const options = {
    weekday: "short", day: "numeric", month: "short", year: "numeric",
    hour: "2-digit", minute: "2-digit", second: seconds ? "2-digit" : undefined, hourCycle: "h23",
  };
  try {
    return new Intl.DateTimeFormat(undefined, { ...options, timeZone: zone }).format(new Date(iso));
  } catch {
    // A zone this browser does not know: its own.
    return new Intl.DateTimeFormat(undefined, options).format(new Date(iso));
  }
}

/// One firing in a schedule's list: its outcome and when it was due (in the schedule's zone).
export function firingLine(firing, zone) {
  const at = zonedTime(firing.due_at, zone, { seconds: new Date(firing.due_at).getUTCSeconds() !== 0 });
  const words = { claimed: "Starting", running: "Running", succeeded: "Succeeded", failed: "Failed", interrupted: "Interrupted", skipped: "Skipped" };
  const outcome = words[firing.status] ?? firing.status;
  return firing.error ? `${outcome}, due ${at}: ${firing.error}` : `${outcome}, due ${at}`;
}
