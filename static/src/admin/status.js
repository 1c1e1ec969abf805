// The admin page's server sections, from `GET /admin/api/status`: the model servers' health
// (with why one is unreachable), the MCP servers' health, the version and the storage used.
import { h } from "../ui/dom.js";

/// Bytes as people read them.
export function size(bytes) {
  if (bytes === null || bytes === undefined) return "not known";
  const units = ["bytes", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

const PROVIDER_STATE = { ok: "Reachable", unreachable: "Unreachable", unchecked: "Not checked yet" };

function providerItem(provider) {
  const models = `${provider.models} model${provider.models === 1 ? "" : "s"}`;
  return h("li", { class: `health ${provider.status}` },
    h("strong", null, provider.id), " — ", PROVIDER_STATE[provider.status] ?? provider.status, `, ${models}`,
    provider.error ? h("p", { class: "muted health-error" }, provider.error) : null);
}

function mcpItem(server) {
  return h("li", { class: `health ${server.state}` },
    h("strong", null, server.id), ` — ${server.state} (${server.transport}), ${server.tools} tool${server.tools === 1 ? "" : "s"}`,
    server.last_error ? h("p", { class: "muted health-error" }, `Last error: ${server.last_error}`) : null,
    server.warning ? h("p", { class: "muted health-error" }, server.warning) : null);
}

/// The sections, filled from a status answer.
export function statusSections(status) {
  const storage = status.storage;
  return [
    h("section", { class: "admin-section", "aria-labelledby": "admin-providers" },
      h("h2", { id: "admin-providers" }, "Model servers"),
      h("ul", { class: "health-list", "aria-labelledby": "admin-providers" }, status.providers.map(providerItem))),
    h("section", { class: "admin-section", "aria-labelledby": "admin-mcp" },
      h("h2", { id: "admin-mcp" }, "MCP servers"),
      status.mcp_servers.length === 0
        ? h("p", { class: "muted" }, "No MCP servers are configured.")
        : h("ul", { class: "health-list", "aria-labelledby": "admin-mcp" }, status.mcp_servers.map(mcpItem))),
    h("section", { class: "admin-section", "aria-labelledby": "admin-server" },
      h("h2", { id: "admin-server" }, "Server"),
      h("dl", { class: "admin-facts" },
        h("dt", null, "Version"), h("dd", null, status.version),
        h("dt", null, "Accounts"), h("dd", null, String(status.users)),
        h("dt", null, "Data directory"), h("dd", null, size(storage.data_dir_bytes) + (storage.data_dir_counted_in_full ? "" : " (at least)")),
        storage.database_bytes !== null ? [h("dt", null, "Database"), h("dd", null, size(storage.database_bytes))] : null)),
  ];
}
