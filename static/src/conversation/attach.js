// The composer's images: picked with the "Attach image" button, pasted or dropped into the
// composer. Each is checked against the server's limits before any upload (`refusalOf`: not an
// image, too large, one too many; the refusal is shown), drawn as a thumbnail with a remove
// button, and uploaded to the chat at once — or, in a chat that does not exist yet, when it is
// made (`uploadTo`). A message is sent with their ids (`ids`).
import { api, chatPath } from "../api.js";
import { h } from "../ui/dom.js";
import { DEFAULT_LIMITS, refusalOf, filesOf } from "./images.js";

const SVG = "http://www.w3.org/2000/svg";

/// A picture's outline, drawn with the page's text colour (no icon font, no inline style).
function pictureIcon() {
  const shape = (tag, attributes) => {
    const el = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, value);
    return el;
  };
  const stroke = { fill: "none", stroke: "currentColor", "stroke-width": "2", "stroke-linejoin": "round" };
  const icon = shape("svg", { viewBox: "0 0 24 24", width: "20", height: "20", "aria-hidden": "true", focusable: "false" });
  icon.append(
    shape("rect", { x: "3", y: "4", width: "18", height: "16", rx: "2", ...stroke }),
    shape("circle", { cx: "9", cy: "10", r: "2", fill: "currentColor" }),
    shape("path", { d: "M4 19l6-6 4 4 3-3 4 4", ...stroke }));
  return icon;
}

export function composerImages(chatId) {
  let limits = null;
  let items = [];
  let seq = 0;

  const picker = h("input", {
    type: "file",
    accept: DEFAULT_LIMITS.mime_types.join(","),
    multiple: true,
    class: "visually-hidden",
    tabindex: "-1",
    "aria-hidden": "true",
  });
  const button = h("button", { type: "button", class: "icon attach", "aria-label": "Attach image", title: "Attach image" }, pictureIcon());
  const tray = h("ul", { class: "composer-images", "aria-label": "Images to send", hidden: true });
  const refusal = h("p", { class: "composer-refusal", role: "alert" });

  button.addEventListener("click", () => picker.click());
  picker.addEventListener("change", () => {
    add([...picker.files]);
    picker.value = "";
  });

  async function loadLimits() {
    if (!limits) {
      try {
        limits = await api("GET", "/chat/api/attachments/limits");
      } catch {
        limits = DEFAULT_LIMITS;
      }
    }
    return limits;
  }

  /// Checks `files` and keeps those that may be sent; says why the others may not.
  async function add(files) {
    if (files.length === 0) return;
    const known = await loadLimits();
    const refused = [];
    for (const file of files) {
      const why = refusalOf(file, known, items.length);
      if (why) {
        refused.push(why);
        continue;
      }
      const item = {
        key: ++seq,
        file,
        name: file.name || "pasted image",
        mime: file.type,
        preview: URL.createObjectURL(file),
        local: true,
        id: null,
        upload: null,
      };
      items.push(item);
      if (chatId) start(item, chatId);
    }
    refusal.textContent = refused.join(" ");
    draw();
  }

  function start(item, chat) {
    const form = new FormData();
    form.append("file", item.file, item.name);
    item.upload = api("POST", chatPath(chat, "/attachments"), form).then((created) => {
      item.id = created.id;
      item.mime = created.mime_type;
      return item;
    });
    // A failed upload is shown at once, and the image leaves the tray.
    item.upload.catch((err) => {
      if (!items.includes(item)) return;
      refusal.textContent = `${item.name} could not be uploaded: ${err.message}`;
      remove(item);
    });
    return item.upload;
  }

  function remove(item) {
    items = items.filter((i) => i !== item);
    if (item.local) URL.revokeObjectURL(item.preview);
    draw();
  }

  function draw() {
    tray.hidden = items.length === 0;
    tray.replaceChildren(...items.map((item, index) => h("li", { class: "composer-image" },
      h("img", { src: item.preview, alt: `Image ${index + 1} to send: ${item.name}` }),
      h("button", { type: "button", class: "icon remove-image", "aria-label": `Remove image ${item.name}`, onclick: () => remove(item) }, "×"))));
  }

  return {
    picker,
    button,
    tray,
    refusal,
    count: () => items.length,
    /// A paste into the composer: its images are attached, its text pasted as usual.
    paste(event) {
      const files = filesOf(event.clipboardData);
      if (files.length === 0) return;
      event.preventDefault();
      add(files);
    },
    /// A drop on the composer.
    drop(event) {
      const files = filesOf(event.dataTransfer);
      if (files.length === 0) return;
      event.preventDefault();
      add(files);
    },
    /// The ids of every image, once uploaded (rejects if one could not be).
    async ids() {
      const uploaded = await Promise.all(items.map((item) => item.upload ?? Promise.reject(new Error(`${item.name} was not uploaded`))));
      return uploaded.map((item) => item.id);
    },
    /// Uploads every image to the chat just made; resolves to `[{id, mime_type}]`.
    async uploadTo(chat) {
      const uploaded = await Promise.all(items.map((item) => item.upload ?? start(item, chat)));
      return uploaded.map((item) => ({ id: item.id, mime_type: item.mime }));
    },
    /// Images uploaded before this view existed (a new chat's first message).
    adopt(uploaded) {
      for (const { id, mime_type: mime } of uploaded) {
        const preview = chatPath(chatId, `/attachments/${encodeURIComponent(id)}`);
        const item = { key: ++seq, name: "image", mime, preview, local: false, id, upload: null };
        item.upload = Promise.resolve(item);
        items.push(item);
      }
      draw();
    },
    /// The parts the message being sent shows while the server has not answered yet.
    parts: () => items.map((item) => ({ type: "image", attachment_id: item.id, mime_type: item.mime, preview_url: item.preview })),
    /// Empties the tray, handing its images back (to `restore` if the send fails).
    take() {
      const taken = items;
      items = [];
      refusal.textContent = "";
      draw();
      return taken;
    },
    restore(taken) {
      items = [...taken, ...items];
      draw();
    },
    /// Frees what sent images held on this page.
    release(taken) {
      for (const item of taken) if (item.local) URL.revokeObjectURL(item.preview);
    },
  };
}
