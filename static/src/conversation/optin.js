// A chat's opt-in tools, as its settings show them: the tools a message turns on by naming them
// in `x_tools` (the catalog's `opt_in`, `GET /api/tools`: the research tools, the browser, the
// code interpreter), each with its short description and what it needs, and whether it can be
// chosen (the server has it; the chat's agent allows it). Pure: settings.js draws the choices
// and store.js keeps and sends them.

/// The names people know the opt-in tools by, in the order shown; an opt-in tool not named
/// here (one the server gains later) shows its own name, after these.
export const OPT_IN_LABELS = [
  ["web_search", "Web search"],
  ["fetch_url", "Read web pages"],
  ["code_search", "GitHub code search"],
  ["gitlab_code_search", "GitLab code search"],
  ["calculator", "Calculator"],
  ["browser_action", "Browser"],
  ["code_interpreter", "Code interpreter (Python)"],
];

/// The choices to show, from the catalog (`{tools, unavailable}`, null while it loads) and the
/// names the chat's agent allows (null while they load: every one allowed). Each:
/// `{name, label, about, available, reason, allowed}` — `about` the tool's summary and what it
/// needs; `reason` why the server cannot offer it.
export function optInChoices(catalog, allowed) {
  const listed = catalog ? [...(catalog.tools ?? []), ...(catalog.unavailable ?? [])].filter((t) => t.opt_in) : [];
  const known = new Map(OPT_IN_LABELS);
  const names = [...OPT_IN_LABELS.map(([name]) => name), ...listed.map((t) => t.name).filter((name) => !known.has(name))];
  return names
    // Once the catalog is known, only what Colloquy has (a label for a tool it lacks is dropped).
    .filter((name) => !catalog || listed.some((t) => t.name === name))
    .map((name) => {
      const tool = listed.find((t) => t.name === name);
      const available = tool ? tool.available !== false : true;
      return {
        name,
        label: known.get(name) ?? name,
        about: tool ? about(tool) : "",
        available,
        reason: available ? null : (tool.reason ?? "not available on this server"),
        allowed: allowed === null || allowed.includes(name),
      };
    });
}

/// A tool's summary and what it needs, as one line.
export function about(tool) {
  const summary = tool.summary || tool.description || "";
  return tool.needs ? `${summary} Needs ${tool.needs}.`.trim() : summary;
}
