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

export function outcomeLine(firing) {
  if (!firing) return "not fired yet";
  const at = firingTime(firing.due_at);
  if (firing.status === "failed") return `failed at ${at}: ${firing.error ?? ""}`;
  if (firing.status === "skipped") return `skipped at ${at}: ${firing.error ?? ""}`;
  return `${firing.status} at ${at}`;
}
