// The account page's API keys: create one with a name (its secret is shown once, with a copy
// button), the list with each key's prefix and last use, and revoke. Below them, how to use a
// key from the OpenAI SDK against this server, with its base URL filled in.
import { api } from "../api.js";
import { h, when } from "../ui/dom.js";
import { confirmDialog } from "../ui/dialog.js";
import { section } from "./section.js";

/// The snippets that call this server with a key, for a base URL.
export function sdkSnippets(baseUrl, model) {
  return {
    python: `from openai import OpenAI\n\nclient = OpenAI(base_url="${baseUrl}", api_key="YOUR_KEY")\nreply = client.chat.completions.create(\n    model="${model}",\n    messages=[{"role": "user", "content": "Hello!"}],\n)\nprint(reply.choices[0].message.content)`,
    node: `import OpenAI from "openai";\n\nconst client = new OpenAI({ baseURL: "${baseUrl}", apiKey: "YOUR_KEY" });\nconst reply = await client.chat.completions.create({\n  model: "${model}",\n  messages: [{ role: "user", content: "Hello!" }],\n});\nconsole.log(reply.choices[0].message.content);`,
  };
}

export function keysSection() {
  const name = h("input", { id: "key-name", maxlength: 100, autocomplete: "off", required: true });
  const create = h("button", { type: "submit", class: "primary" }, "Create key");
  const form = h("form", { class: "account-form inline-form", "aria-label": "Create an API key" },
    h("div", { class: "field" }, h("label", { for: "key-name" }, "Key name"), name), create);
  const fresh = h("div", { class: "new-key", hidden: true });
  const status = h("p", { class: "muted", role: "status" });
  const list = h("ul", { class: "account-list", "aria-label": "Your API keys" });
  const empty = h("p", { class: "muted", hidden: true }, "No API keys yet.");
  let destroyed = false;

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const wanted = name.value.trim();
    if (!wanted) return name.focus();
    create.disabled = true;
    status.textContent = "";
    try {
      const made = await api("POST", "/auth/api-keys", { name: wanted });
      name.value = "";
      showSecret(made);
      refresh();
    } catch (err) {
      status.textContent = `Not created: ${err.message}`;
    } finally {
      create.disabled = false;
    }
  });

  function showSecret(made) {
    const secret = h("input", { id: "new-key", readonly: true, value: made.key, class: "mono", spellcheck: "false" });
    const copied = h("span", { class: "muted", role: "status" });
    const copy = h("button", { type: "button" }, "Copy key");
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(made.key);
        copied.textContent = "Copied.";
      } catch {
        secret.select();
        copied.textContent = "Select the key and copy it.";
      }
    });
    fresh.replaceChildren(
      h("p", null, h("strong", null, `Key “${made.name}” created.`), " Copy it now: it is not shown again."),
      h("div", { class: "field" }, h("label", { for: "new-key" }, "New API key"), h("div", { class: "inline-form" }, secret, copy, copied)));
    fresh.hidden = false;
    secret.focus();
    secret.select();
  }

  async function refresh() {
    try {
      const { data } = await api("GET", "/auth/api-keys");
      if (destroyed) return;
      list.replaceChildren(...data.map(item));
      empty.hidden = data.length > 0;
    } catch (err) {
      if (!destroyed) status.textContent = `Could not load the keys: ${err.message}`;
    }
  }

  function item(key) {
    const revoke = h("button", { type: "button", class: "danger", "aria-label": `Revoke ${key.name}` }, "Revoke");
    revoke.addEventListener("click", async () => {
      const sure = await confirmDialog({
        title: `Revoke ${key.name}?`,
        body: `Programs using the key starting ${key.prefix} stop working at once. This cannot be undone.`,
        confirm: "Revoke",
        danger: true,
      });
      if (!sure) return;
      try {
        await api("DELETE", `/auth/api-keys/${encodeURIComponent(key.id)}`);
        status.textContent = `Revoked ${key.name}.`;
        refresh();
      } catch (err) {
        status.textContent = `Not revoked: ${err.message}`;
      }
    });
    return h("li", null,
      h("span", { class: "account-item" },
        h("span", null, h("strong", null, key.name), " ", h("code", null, `${key.prefix}…`)),
        h("span", { class: "muted" }, `created ${when(key.created_at)} · ${key.last_used_at ? `last used ${when(key.last_used_at)}` : "never used"}`)),
      revoke);
  }

  const baseUrl = `${location.origin}/v1`;
  const python = h("code");
  const node = h("code");
  const showSnippets = (model) => {
    const snippets = sdkSnippets(baseUrl, model);
    python.textContent = snippets.python;
    node.textContent = snippets.node;
  };
  showSnippets("MODEL");
  // The model filled in: the first this server lists.
  api("GET", "/v1/models").then((models) => {
    if (!destroyed && models?.data?.[0]?.id) showSnippets(models.data[0].id);
  }).catch(() => {});
  const usage = h("div", { class: "sdk-usage" },
    h("h3", { id: "sdk-heading" }, "Use a key with the OpenAI SDK"),
    h("p", null, "This server speaks the OpenAI API at ", h("code", null, baseUrl), ". Put a key in place of YOUR_KEY:"),
    h("pre", { tabindex: "0", role: "region", "aria-label": "Python example" }, python),
    h("pre", { tabindex: "0", role: "region", "aria-label": "JavaScript example" }, node));

  refresh();
  const el = section("keys-heading", "API keys",
    h("p", { class: "muted" }, "Keys let programs use this account, through the OpenAI API or the chat API."),
    form, fresh, status, list, empty, usage);
  return { el, destroy: () => { destroyed = true; } };
}
