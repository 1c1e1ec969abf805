// The conversation screen: the active branch, the composer, and the run in flight. A run's
// SSE stream (from send, edit, regenerate, an ask_user answer, or a re-attach after a reload)
// is folded into a run object by `applyFrame`; the streaming answer is re-rendered at most
// every 50 ms, and only its tail. If the connection drops, the view re-attaches with the last
// sequence number it saw, so nothing is lost or doubled. A Deep Think run shows its plan and
// sub-tasks in a panel above the answer (deepthink.js); artifacts open in the artifacts panel
// (../artifacts/panel.js), which a run's artifact events open live. The documents sidebar and
// the memory panel (documents/, memory/) open from the header. Images are attached in the
// composer (attach.js) and shown as thumbnails in the history. A chat a schedule fires in
// wakes at its next firing (`next_firing_at`) and follows that run live, steps and all.
import { api, stream, chatPath, ApiError } from "../api.js";
import { readFrames } from "../sse.js";
import { navigate } from "../router.js";
import { store, drafts, settings } from "../store.js";
import { h, throttle } from "../ui/dom.js";
import { chatHeader } from "../ui/header.js";
import { shareButton } from "../shared/dialog.js";
import { icon } from "../ui/icons.js";
import { StreamingMarkdown } from "../markdown/render.js";
import { newRun, newDeepThink, applyFrame } from "./run.js";
import { messageView, toolList, artifactList, adoptRendering, storedTools, mergeTools, trimLine } from "./message.js";
import { askCard } from "./askcard.js";
import { composerImages } from "./attach.js";
import { imageParts, imageUrl } from "./images.js";
import { liveDeepThinkPanel } from "./deepthink.js";
import { workflowSteps, storedWorkflows } from "./workflow.js";
import { reasoningBlock } from "./reasoning.js";
import { artifactsPanel } from "../artifacts/panel.js";
import { settingsPanel } from "./settings.js";
import { modelPicker } from "./modelpicker.js";
import { documentsPanel } from "../documents/panel.js";
import { memoryPanel } from "../memory/panel.js";
import { refreshChats } from "../chats/sidebar.js";
import { revealLinkedMessage } from "./linked.js";

const ROOT = "\u0000root";
/// Where a new chat's first images wait for its own view to send them.
const AUTOSEND_IMAGES = "colloquy.autosend.images";
const TOUCH = window.matchMedia?.("(pointer: coarse)").matches ?? false;
const REATTACH_TRIES = 6;
const SHORT_PLACEHOLDER = "Message Colloquy";
const LONG_PLACEHOLDER = "Message Colloquy (Enter to send, Shift+Enter for a new line)";
/// How long after a schedule's due time the page looks for its run: a firing is claimed within
/// the scheduler's poll (under a second by default), then starts.
const FIRING_LOOK_DELAY_MS = 1500;
/// The longest a page sleeps before looking again (timers drift; a laptop sleeps).
const MAX_WAKE_MS = 15 * 60 * 1000;

export function conversationView({ chatId, onMenu }) {
  let nodes = new Map();
  let children = new Map();
  let path = [];
  let asks = [];
  const runs = new Map();
  let live = null;
  let treeGeneration = 0;
  let destroyed = false;
  /// The timer that looks for a schedule's next firing in this chat.
  let wake = null;
  let stick = true;
  let chat = null;

  const title = h("h1", { class: "chat-heading" }, chatId ? "" : "New chat");
  const banner = h("div", { class: "banner", role: "alert", hidden: true });
  const list = h("div", { class: "messages", role: "log", "aria-label": "Conversation", "aria-live": "off" });
  // Below the conversation, not over it: shown, it takes a line of its own, so it never covers text.
  const jump = h("button", { type: "button", class: "jump", hidden: true, onclick: () => scrollToEnd(true) }, icon("arrowDown"), "Latest");
  // Focusable, so a keyboard can scroll the conversation (the settings panel may leave it short).
  const scroller = h("div", { class: "scroller", tabindex: "0" }, list);
  const input = h("textarea", {
    id: "composer",
    rows: 1,
    placeholder: SHORT_PLACEHOLDER,
    "aria-label": "Message",
  });
  input.value = drafts.get(chatId);
  const sendButton = h("button", { type: "submit", class: "primary send" }, "Send");
  const stopButton = h("button", { type: "button", class: "danger stop", hidden: true }, "Stop");
  const settingsButton = h("button", { type: "button", class: "icon-text", "aria-expanded": "false", "aria-controls": "chat-settings" }, "Settings");
  const panel = settingsPanel(chatId);
  panel.el.hidden = true;
  // A new chat's model, when one was picked before it existed: sent with its creation.
  let pickedModel = null;
  const picker = modelPicker(chatId, { onChange: (model) => (pickedModel = model) });
  // The documents sidebar and the memory panel belong to a chat, so they exist once it does;
  // they share the right-hand side, one at a time.
  const sidePanels = [];
  const sideToggled = (which, open) => {
    if (open) for (const other of sidePanels) if (other !== which) other.hide();
    el.classList.toggle("side-open", sidePanels.some((p) => p.open));
  };
  const documents = chatId ? documentsPanel(chatId, { onToggle: (open) => sideToggled(documents, open) }) : null;
  const memory = chatId ? memoryPanel(chatId, { onToggle: (open) => sideToggled(memory, open) }) : null;
  if (chatId) sidePanels.push(documents, memory);
  const artifacts = chatId ? artifactsPanel(chatId) : null;
  const images = composerImages(chatId);
  const composer = h("form", { class: "composer", "aria-label": "Send a message" },
    images.tray,
    h("div", { class: "composer-row" }, images.button, images.picker, input, sendButton, stopButton),
    images.refusal,
    h("p", { class: "composer-status", role: "status" }));
  // One row at every width: `tools` stay in it, `actions` fold into "More actions" on phones
  // (ui/header.js; static/README.md says how to add one).
  const header = chatHeader({
    onMenu,
    title,
    tools: [panel.badge, picker.el],
    actions: [
      { button: artifacts?.button, icon: "artifact" },
      { button: documents?.button, icon: "documents" },
      { button: memory?.button, icon: "memory" },
      { button: settingsButton, icon: "settings" },
      { button: chatId ? shareButton(chatId) : null, icon: "share" },
    ],
  });
  // The thread and the composer on the left; the side panels beside them on wide screens and
  // over the thread (never the header or the composer) on narrow ones (app.css).
  const thread = h("div", { class: "conversation-thread" }, panel.el, banner, scroller, jump);
  const el = h("main", { class: "conversation", "aria-labelledby": "chat-heading-text" },
    header.el,
    h("div", { class: "conversation-body" }, thread, composer, artifacts?.el, ...sidePanels.map((p) => p.el)));
  title.id = "chat-heading-text";

  settingsButton.addEventListener("click", () => {
    panel.el.hidden = !panel.el.hidden;
    settingsButton.setAttribute("aria-expanded", String(!panel.el.hidden));
    if (!panel.el.hidden) panel.focus();
  });

  // Auto-scroll follows the answer until the reader scrolls up, and resumes at the bottom.
  // Only the reader's own scrolling unpins it: messages laid out late (off-screen ones are
  // sized by estimate until shown) move the bottom without anyone scrolling.
  let readerScrolledAt = -Infinity;
  const readerScrolls = () => (readerScrolledAt = performance.now());
  for (const type of ["wheel", "touchmove", "pointerdown"]) {
    scroller.addEventListener(type, readerScrolls, { passive: true });
  }
  const SCROLL_KEYS = new Set(["PageUp", "PageDown", "ArrowUp", "ArrowDown", "Home", "End", " "]);
  const keyScrolls = (event) => {
    if (SCROLL_KEYS.has(event.key) && event.target !== input) readerScrolls();
  };
  document.addEventListener("keydown", keyScrolls, { passive: true });
  scroller.addEventListener("scroll", () => {
    const distance = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight;
    if (distance < 48) stick = true;
    else if (performance.now() - readerScrolledAt < 1000) stick = false;
    else if (stick) scroller.scrollTop = scroller.scrollHeight;
    jump.hidden = stick;
  }, { passive: true });
  // The list grows (a long message laid out, an answer's last lines): stay at the bottom.
  const grows = new ResizeObserver(() => {
    if (stick) scrollToEnd();
  });
  grows.observe(list);
  // A message the address names (`#m-{id}`, a search result): shown instead of the latest.
  function revealLinked() {
    if (revealLinkedMessage(list, location.hash)) stick = false;
  }
  window.addEventListener("hashchange", revealLinked);
  function scrollToEnd(force = false) {
    if (force) stick = true;
    if (stick) {
      scroller.scrollTop = scroller.scrollHeight;
      jump.hidden = true;
    }
  }

  input.addEventListener("input", () => {
    drafts.set(chatId, input.value);
    autosize();
  });
  input.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.shiftKey || event.isComposing || TOUCH) return;
    event.preventDefault();
    composer.requestSubmit();
  });
  composer.addEventListener("submit", (event) => {
    event.preventDefault();
    send();
  });
  input.addEventListener("paste", (event) => images.paste(event));
  composer.addEventListener("dragover", (event) => {
    if (!event.dataTransfer?.types?.includes("Files")) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
  });
  composer.addEventListener("drop", (event) => images.drop(event));
  stopButton.addEventListener("click", stop);
  function autosize() {
    input.style.height = "auto";
    input.style.height = `${Math.min(input.scrollHeight, 240)}px`;
  }
  // The keyboard hint goes in the placeholder only where it fits the empty box's one line
  // (a side panel or a phone leaves the box narrow), so the placeholder is never cut off.
  const measure = document.createElement("canvas").getContext("2d");
  const fitPlaceholder = new ResizeObserver(() => {
    const style = getComputedStyle(input);
    const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (measure) measure.font = style.font;
    const fits = !TOUCH && measure && measure.measureText(LONG_PLACEHOLDER).width <= room;
    const wanted = fits ? LONG_PLACEHOLDER : SHORT_PLACEHOLDER;
    if (input.placeholder === wanted) return;
    input.placeholder = wanted;
    if (!input.value) requestAnimationFrame(autosize);
  });
  fitPlaceholder.observe(input);

  function showBanner(text, kind = "error") {
    banner.replaceChildren(h("span", null, text), h("button", { type: "button", class: "icon", "aria-label": "Dismiss", onclick: () => (banner.hidden = true) }, "×"));
    banner.className = `banner banner-${kind}`;
    banner.hidden = false;
  }

  function setBusy(busy) {
    sendButton.hidden = busy;
    stopButton.hidden = !busy;
    list.setAttribute("aria-busy", String(busy));
    for (const button of list.querySelectorAll(".message-actions button.action:not(:first-child)")) button.disabled = busy;
  }

  // ---- loading and drawing the branch ----

  async function load() {
    if (!chatId) {
      draw();
      requestAnimationFrame(() => input.focus());
      return;
    }
    try {
      const generation = ++treeGeneration;
      const [chatInfo, tree, asked] = await Promise.all([
        api("GET", `/chat/api/chats/${encodeURIComponent(chatId)}`),
        api("GET", chatPath(chatId, "/tree")),
        api("GET", chatPath(chatId, "/asks?status=all")),
      ]);
      if (destroyed) return;
      chat = chatInfo;
      panel.setChat(chat);
      picker.show(chat.model);
      title.textContent = chat.title;
      document.title = `${chat.title} · Colloquy`;
      if (generation === treeGeneration) {
        setTree(tree.data);
        asks = asked.data;
      }
      draw();
      scrollToEnd(true);
      revealLinked();
      artifacts.refresh();
      const running = chat.running_runs ?? [];
      if (running.length > 0 && !live) reattach(running[running.length - 1].id);
      else requestAnimationFrame(() => input.focus());
      wakeAt(chat.next_firing_at);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        title.textContent = "Chat not found";
        showBanner("This chat does not exist, or it is not yours.");
        return;
      }
      if (err instanceof ApiError && err.status === 401) return;
      showBanner(`Could not load the chat: ${err.message}`);
    }
  }

  /// A schedule fires in this chat at `at` (ISO time, or null): the page looks then, follows
  /// the firing's run live, and waits for the next one. No polling between firings.
  function wakeAt(at) {
    clearTimeout(wake);
    wake = null;
    const due = at ? Date.parse(at) : NaN;
    if (!Number.isFinite(due) || destroyed) return;
    const delay = Math.min(Math.max(due - Date.now() + FIRING_LOOK_DELAY_MS, FIRING_LOOK_DELAY_MS), MAX_WAKE_MS);
    wake = setTimeout(lookForFiring, delay);
  }

  async function lookForFiring() {
    wake = null;
    if (destroyed) return;
    try {
      const info = await api("GET", `/chat/api/chats/${encodeURIComponent(chatId)}`);
      if (destroyed) return;
      const running = info.running_runs ?? [];
      if (running.length > 0 && !live) reattach(running[running.length - 1].id);
      else if (!live) {
        // It may have finished already: its answer is in the tree.
        await refreshTree();
        if (!destroyed && !live) draw();
      }
      wakeAt(info.next_firing_at);
    } catch {
      wakeAt(new Date(Date.now() + MAX_WAKE_MS).toISOString());
    }
  }

  function setTree(data) {
    nodes = new Map(data.map((n) => [n.id, n]));
    children = new Map();
    for (const node of data) {
      const key = node.parent_id ?? ROOT;
      if (!children.has(key)) children.set(key, []);
      children.get(key).push(node);
    }
    const active = data.filter((n) => n.on_active_branch);
    const activeIds = new Set(active.map((n) => n.id));
    const leaf = active.find((n) => !(children.get(n.id) ?? []).some((c) => activeIds.has(c.id)));
    path = [];
    for (let node = leaf; node; node = node.parent_id ? nodes.get(node.parent_id) : null) path.unshift(node);
  }

  /// Reloads the tree and the asks. Only the latest refresh is applied: one started when a run
  /// began may answer after the one its end started, and must not put back a tree without the
  /// answer.
  async function refreshTree() {
    const generation = ++treeGeneration;
    const [tree, asked] = await Promise.all([
      api("GET", chatPath(chatId, "/tree")),
      api("GET", chatPath(chatId, "/asks?status=all")),
    ]);
    if (generation !== treeGeneration) return;
    setTree(tree.data);
    asks = asked.data;
  }

  function visible(node) {
    if (node.role === "user") return true;
    if (node.role !== "assistant") return false;
    return Boolean(node.content) || Boolean(node.reasoning?.text) || (Array.isArray(node.parts) && node.parts.length > 0) || Boolean(node.stop_reason && node.stop_reason !== "completed");
  }

  function siblingsOf(node) {
    return (children.get(node.parent_id ?? ROOT) ?? []).filter((n) => n.role === node.role);
  }

  function cardsFor(runId) {
    return asks.filter((a) => a.run_id === runId && a.status !== "pending").map((a) => askCard(a, () => {}));
  }

  /// Redraws the branch; the live answer (if any) is kept and moved to the end.
  function draw() {
    const busy = Boolean(live);
    const shown = path.filter(visible);
    const views = shown.map((node) => messageView(node, {
      siblings: siblingsOf(node),
      busy,
      onSwitch: switchTo,
      onEdit: startEdit,
      onRegenerate: regenerate,
      onOpenArtifact: openArtifact,
      imageUrl: (part) => imageUrl(chatId, part),
      deepThink: node.run_id ? runs.get(node.run_id)?.deepThink : null,
      workflows: storedWorkflows(node.workflows) ?? (node.run_id ? runs.get(node.run_id)?.workflows : null),
      tools: mergeTools(storedTools(node.tools), node.run_id ? runs.get(node.run_id)?.tools : null),
      trimmed: node.run_id ? runs.get(node.run_id)?.trimmed : null,
      cards: node.role === "assistant" && node.run_id ? cardsFor(node.run_id) : null,
    }));
    const onPath = new Set(shown.map((n) => n.run_id).filter(Boolean));
    const answeredRuns = new Set(shown.filter((n) => n.role === "assistant").map((n) => n.run_id));
    // Questions still open, and closed ones whose run never produced an answer on this branch.
    const loose = asks.filter((a) => !answeredRuns.has(a.run_id) && (a.status === "pending" || onPath.has(a.run_id) || isLatestTurn(a)));
    const looseCards = loose.filter((a) => !(live && live.run.asks.some((b) => b.correlation_id === a.correlation_id)))
      .map((a) => askCard(a, (answer) => answerAsk(a, answer)));
    if (views.length === 0 && !live && looseCards.length === 0) {
      views.push(h("div", { class: "empty" },
        h("h2", null, "How can I help?"),
        h("p", { class: "muted" }, "Ask anything. Turn on tools in Settings to let the assistant search the web, read pages and calculate.")));
    }
    const top = scroller.scrollTop;
    list.replaceChildren(...views, ...looseCards, ...(live ? [live.el] : []));
    // New elements are sized by estimate until laid out: keep the reader where they were, or
    // at the bottom, before the browser paints.
    if (stick) scroller.scrollTop = scroller.scrollHeight;
    else scroller.scrollTop = top;
    setBusy(busy);
  }

  function isLatestTurn(ask) {
    const lastUser = [...path].reverse().find((n) => n.role === "user");
    return lastUser && ask.status !== "pending" && path[path.length - 1] === lastUser && ask.created_at >= lastUser.created_at;
  }

  // ---- runs ----

  function openArtifact(artifact) {
    artifacts?.open(artifact);
  }

  function liveElement(run) {
    const deep = h("div", { class: "live-deep" });
    const thought = h("div", { class: "live-reasoning" });
    const progress = h("p", { class: "progress", role: "status" });
    const tools = h("div", { class: "live-tools" });
    const flow = h("div", { class: "live-workflow" });
    const cards = h("div", { class: "live-asks" });
    const body = h("div", { class: "markdown" });
    const typing = h("span", { class: "typing", role: "img", "aria-label": "The assistant is answering" }, h("span"), h("span"), h("span"));
    const footer = h("div", { class: "live-footer" });
    const trim = h("div", { class: "live-trim" });
    const el = h("article", { class: "message assistant live", "aria-label": "Assistant", "aria-busy": "true" }, deep, thought, progress, cards, flow, tools, body, typing, trim, footer);
    const md = new StreamingMarkdown(body);
    const renderText = throttle(() => {
      md.update(run.text);
      scrollToEnd();
    }, 50);
    let block = null;
    // The reasoning's text is redrawn at most every 50 ms, as the answer's is.
    const renderReasoning = throttle(() => {
      if (!run.reasoning) return;
      if (!block) {
        block = reasoningBlock();
        thought.replaceChildren(block.el);
      }
      block.update({ text: run.reasoning, durationMs: run.reasoningMs, streaming: run.reasoningActive && !run.finished });
      scrollToEnd();
    }, 50);
    return { el, deep, deepPanel: null, progress, flow, tools, cards, body, typing, trim, footer, md, renderText, renderReasoning };
  }

  function paint(view, run, changes) {
    if (changes.includes("reasoning")) view.renderReasoning();
    if (changes.includes("text")) {
      view.typing.hidden = true;
      view.renderText();
    }
    if (changes.includes("progress")) {
      view.progress.textContent = run.progress ?? "";
      view.progress.hidden = !run.progress;
    }
    if (changes.includes("workflow")) {
      view.flow.replaceChildren(workflowSteps(run.workflows) ?? "");
      scrollToEnd();
    }
    if (changes.includes("tools")) {
      // A list the reader opened stays open as calls come in.
      const open = view.tools.querySelector("details.tools")?.open ?? false;
      const list = toolList(run.tools, { open });
      view.tools.replaceChildren(list ?? "");
      memory?.noticeTools(run.tools);
    }
    if (changes.includes("asks")) {
      view.cards.replaceChildren(...run.asks.map((ask) => askCard(ask, (answer) => answerAsk(ask, answer))));
      view.typing.hidden = true;
      scrollToEnd();
    }
    if (changes.includes("deepThink") && run.deepThink) {
      if (!view.deepPanel) {
        view.deepPanel = liveDeepThinkPanel({ onOpenReport: (identifier) => openArtifact({ identifier }) });
        view.deep.replaceChildren(view.deepPanel.el);
      }
      view.deepPanel.update(run.deepThink);
      scrollToEnd();
    }
    if (changes.includes("artifacts") || changes.includes("deepThink")) {
      // The report opens from the Deep Think panel; the list has the rest.
      const report = run.deepThink?.artifactName;
      view.footer.replaceChildren(artifactList(run.artifacts.filter((a) => a.identifier !== report), openArtifact) ?? "");
    }
    if (changes.includes("artifacts")) artifacts?.live(run.artifacts);
    if (changes.includes("trimmed")) view.trim.replaceChildren(trimLine(run.trimmed) ?? "");
    if (changes.includes("error") && run.error) showBanner(errorText(run.error));
  }

  function errorText(error) {
    if (error.code === "upstream_unreachable") {
      const cause = error.message.replace(/^could not reach the model server:?\s*/, "");
      return cause ? `The model server cannot be reached: ${cause}` : "The model server cannot be reached.";
    }
    if (error.code === "upstream_error" || error.code?.startsWith("upstream")) return `The model server failed: ${error.message}`;
    return `The run failed: ${error.message}`;
  }

  /// Starts a run: `open(signal)` makes the request whose answer is the run's SSE stream.
  /// `deepThink`: the request asked for Deep Think, so its panel shows before its first event.
  async function runStream(open, optimistic, deepThink = false) {
    if (live) return;
    banner.hidden = true;
    const run = newRun();
    const view = liveElement(run);
    if (deepThink) {
      run.deepThink = newDeepThink();
      paint(view, run, ["deepThink"]);
    }
    const controller = new AbortController();
    live = { run, ...view, controller };
    optimistic?.();
    draw();
    scrollToEnd(true);
    try {
      const response = await open(controller.signal);
      run.runId = response.headers.get("x-run-id") ?? run.runId;
      await consume(response, run, view);
    } catch (err) {
      if (err.name !== "AbortError" && !run.runId) {
        live = null;
        if (err instanceof ApiError && err.status === 401) {
          await refreshTree().catch(() => {});
          draw();
          return false;
        }
        showBanner(err.message);
        await refreshTree().catch(() => {});
        draw();
        return false;
      }
    }
    await follow(run, view);
    return true;
  }

  async function consume(response, run, view) {
    await readFrames(response, (frame) => {
      const changes = applyFrame(run, frame);
      if (changes.includes("started") && chatId) {
        refreshTree().then(() => !destroyed && draw()).catch(() => {});
      }
      paint(view, run, changes);
    });
  }

  /// Keeps the run's stream until it is finished: a dropped connection re-attaches after the
  /// last event seen.
  async function follow(run, view) {
    let tries = 0;
    while (!run.done && !destroyed && run.runId && tries < REATTACH_TRIES) {
      tries++;
      await new Promise((resolve) => setTimeout(resolve, Math.min(4000, 250 * 2 ** (tries - 1))));
      try {
        const response = await stream("GET", chatPath(chatId, `/runs/${encodeURIComponent(run.runId)}/events?after=${run.lastSeq}`), undefined, { signal: live?.controller.signal });
        tries = 0;
        await consume(response, run, view);
      } catch (err) {
        if (err.name === "AbortError") break;
        if (err instanceof ApiError && (err.status === 404 || err.status === 401)) break;
      }
    }
    if (destroyed) return;
    await finish(run, view);
  }

  async function finish(run, view) {
    if (run.text) {
      view.md.finish(run.text);
      if (run.assistantMessageId) adoptRendering(run.assistantMessageId, run.text, view.body);
    }
    if (run.runId) runs.set(run.runId, run);
    if (!run.done) showBanner("The connection to Colloquy was lost. Reload the page to see the rest of the answer.");
    live = null;
    try {
      await refreshTree();
    } catch {
      // Keep what was shown.
    }
    if (destroyed) return;
    draw();
    scrollToEnd();
    artifacts?.refresh();
    refreshChats().catch(() => {});
    memory?.refresh();
    if (run.stopReason !== "paused") input.focus();
  }

  function reattach(runId) {
    runStream((signal) => stream("GET", chatPath(chatId, `/runs/${encodeURIComponent(runId)}/events?after=0`), undefined, { signal }));
  }

  function runBody(extra = {}) {
    return { ...extra, ...settings.request(settings.get(chatId), panel.agent()) };
  }

  async function send() {
    const content = input.value.trim();
    if ((!content && images.count() === 0) || live) return;
    if (!chatId) {
      // A new chat: create it (titled by the question), then send from its own URL.
      try {
        // The choices made before the chat existed: its context strategy and agent go with it.
        const { contextStrategy: strategy, agentId, ...runSettings } = settings.get(null);
        const created = await api("POST", "/chat/api/chats", {
          title: (content || "Image").replace(/\s+/g, " ").slice(0, 80),
          ...(strategy ? { context_strategy: strategy } : {}),
          ...(agentId ? { agent_id: agentId } : {}),
          ...(pickedModel ? { model: pickedModel } : {}),
        });
        // The images go to the new chat now; its view sends them with the text.
        const attached = await images.uploadTo(created.id);
        if (attached.length > 0) sessionStorage.setItem(AUTOSEND_IMAGES, JSON.stringify(attached));
        drafts.set(null, "");
        drafts.set(created.id, content);
        settings.set(created.id, { ...runSettings, contextStrategy: strategy });
        sessionStorage.setItem("colloquy.autosend", created.id);
        navigate(`/c/${encodeURIComponent(created.id)}`);
        refreshChats().catch(() => {});
      } catch (err) {
        showBanner(`Could not start a chat: ${err.message}`);
      }
      return;
    }
    let attachments;
    try {
      attachments = await images.ids();
    } catch (err) {
      showBanner(`Could not upload an image: ${err.message}`);
      return;
    }
    const parts = images.parts();
    const held = images.take();
    input.value = "";
    autosize();
    const body = { content, ...(attachments.length > 0 ? { attachments } : {}) };
    const ok = await runStream(
      (signal) => stream("POST", chatPath(chatId, "/messages"), runBody(body), { signal }),
      () => path.push({ id: "pending", role: "user", content, parts, parent_id: path.at(-1)?.id ?? null }),
      settings.get(chatId).deepThink,
    );
    if (ok === false) {
      input.value = content;
      images.restore(held);
      autosize();
    } else {
      drafts.set(chatId, "");
      images.release(held);
    }
  }

  function stop() {
    if (!live?.run.runId) {
      live?.controller.abort();
      return;
    }
    api("POST", chatPath(chatId, `/runs/${encodeURIComponent(live.run.runId)}/cancel`)).catch((err) => showBanner(`Could not stop the run: ${err.message}`));
  }

  function regenerate(node) {
    runStream(
      (signal) => stream("POST", chatPath(chatId, `/messages/${encodeURIComponent(node.id)}/regenerate`), runBody(), { signal }),
      () => {
        const at = path.indexOf(node);
        if (at >= 0) path = path.slice(0, at);
      },
      settings.get(chatId).deepThink,
    );
  }

  function startEdit(node, article) {
    if (live) return;
    const box = h("textarea", { "aria-label": "Edit your message", rows: 3 });
    box.value = node.content ?? "";
    const save = h("button", { type: "submit", class: "primary" }, "Save and send");
    const cancel = h("button", { type: "button", onclick: () => draw() }, "Cancel");
    const form = h("form", { class: "edit-form" }, box, h("div", { class: "row" }, cancel, save));
    // The new version keeps the message's images.
    const kept = imageParts(node);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const content = box.value.trim();
      if (!content && kept.length === 0) return box.focus();
      const attachments = kept.map((part) => part.attachment_id);
      runStream(
        (signal) => stream("POST", chatPath(chatId, `/messages/${encodeURIComponent(node.id)}/edit`), runBody({ content, ...(attachments.length > 0 ? { attachments } : {}) }), { signal }),
        () => {
          const at = path.indexOf(node);
          if (at >= 0) path = [...path.slice(0, at), { id: "pending", role: "user", content, parts: kept, parent_id: node.parent_id }];
        },
        settings.get(chatId).deepThink,
      );
    });
    box.addEventListener("keydown", (event) => {
      if (event.key === "Escape") draw();
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing && !TOUCH) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    article.replaceChildren(form);
    box.focus();
  }

  async function switchTo(sibling) {
    if (live || !sibling) return;
    try {
      await api("POST", chatPath(chatId, `/messages/${encodeURIComponent(sibling.id)}/switch`));
      await refreshTree();
      draw();
    } catch (err) {
      showBanner(`Could not switch versions: ${err.message}`);
    }
  }

  async function answerAsk(ask, answer) {
    if (live) throw new Error("Wait for the current answer to finish.");
    let failure = null;
    await runStream(async (signal) => {
      try {
        return await stream("POST", chatPath(chatId, `/ask/${encodeURIComponent(ask.correlation_id)}`), { answer }, { signal });
      } catch (err) {
        failure = err;
        throw err;
      }
    }, () => {
      asks = asks.filter((a) => a.correlation_id !== ask.correlation_id);
      asks.push({ ...ask, status: "answered", answer });
    });
    if (failure) {
      banner.hidden = true;
      await refreshTree().catch(() => {});
      draw();
      if (failure.status === 410) throw new Error("This question expired before it was answered.");
      if (failure.status === 409) throw new Error("This question was already answered.");
      throw failure;
    }
  }

  const unsubscribe = store.subscribe((_, patch) => {
    if ("chats" in patch && chatId) {
      const mine = store.get().chats.find((c) => c.id === chatId);
      if (mine && mine.title !== title.textContent) {
        title.textContent = mine.title;
        document.title = `${mine.title} · Colloquy`;
      }
    }
  });

  load().then(() => {
    if (chatId && sessionStorage.getItem("colloquy.autosend") === chatId) {
      sessionStorage.removeItem("colloquy.autosend");
      const waiting = sessionStorage.getItem(AUTOSEND_IMAGES);
      sessionStorage.removeItem(AUTOSEND_IMAGES);
      if (waiting) images.adopt(JSON.parse(waiting));
      send();
    }
  });
  documents?.refresh();
  if (!chatId) {
    document.title = "New chat · Colloquy";
    picker.show(null);
  }
  requestAnimationFrame(autosize);

  return {
    el,
    destroy() {
      destroyed = true;
      clearTimeout(wake);
      grows.disconnect();
      fitPlaceholder.disconnect();
      document.removeEventListener("keydown", keyScrolls);
      window.removeEventListener("hashchange", revealLinked);
      live?.controller.abort();
      artifacts?.destroy();
      picker.destroy();
      header.destroy();
      unsubscribe();
      for (const side of sidePanels) side.destroy();
    },
  };
}

