import { test } from "node:test";
import assert from "node:assert/strict";
import { newRun, applyFrame } from "../src/conversation/run.js";

let seq = 0;
const frame = (event) => ({ id: String(++seq), data: JSON.stringify(event) });
const chunk = (content) => frame({ object: "chat.completion.chunk", choices: [{ delta: { content } }] });
const plan = {
  type: "x_deep_think.plan_created",
  title: "Rust web servers",
  total_subtasks: 3,
  subtasks: [
    { id: "1", query: "actix-web performance", tools: ["web_search"] },
    { id: "2", query: "axum ergonomics", tools: ["web_search"] },
    { id: "3", query: "deployment stories", tools: ["fetch_url"] },
  ],
};
const started = (id, index) => ({ type: "x_deep_think.subtask_started", subtask_id: id, subtask_query: plan.subtasks[index].query, subtask_index: index, total_subtasks: 3 });
const completed = (id, index, status = "completed", extra = {}) => ({ type: "x_deep_think.subtask_completed", subtask_id: id, subtask_index: index, status, sources: 2, tokens: 900, ...extra });
const searching = (query) => ({ type: "x_research.searching", name: "web_search", arguments: JSON.stringify({ query }) });

function fullRun() {
  seq = 0;
  return [
    frame({ type: "run.started", run_id: "r1", user_message_id: "u1" }),
    frame({ type: "x_deep_think.discovery_started", mode: "target_focused", message: "Exploring docs.rs" }),
    frame({ type: "x_deep_think.discovery_completed", pages_fetched: 3, site_map: "/ /a /b", message: "Read 3 pages" }),
    frame(plan),
    frame(started("1", 0)),
    frame(searching("actix benchmarks")),
    frame({ type: "tool_call", id: "c1", name: "web_search", arguments: { query: "actix benchmarks" } }),
    frame({ type: "tool_result", toolCallId: "c1", name: "web_search", success: true, resultPreview: "…" }),
    frame({ type: "x_research.result", name: "web_search" }),
    frame(completed("1", 0)),
    frame(started("2", 1)),
    frame({ type: "x_research.reading", name: "fetch_url", arguments: JSON.stringify({ url: "https://docs.rs/axum" }) }),
    frame(completed("2", 1, "budget_exhausted")),
    frame(started("3", 2)),
    frame(completed("3", 2, "failed", { error: "upstream exploded", sources: 0 })),
    frame({ type: "x_deep_think.synthesizing", message: "Synthesizing final report..." }),
    chunk("# Rust web servers\n\n"),
    chunk("Actix is fast [1]."),
    frame({ type: "x_artifact.created", identifier: "deep-think-20261124-101500.md", title: "Rust web servers", version: 1 }),
    frame({ type: "x_deep_think.artifact_created", artifact_type: "comparison_table", artifact_title: "Servers compared", message: "Made a table" }),
    frame({ type: "x_deep_think.completed", title: "Rust web servers", artifact_name: "deep-think-20261124-101500.md" }),
    frame({ type: "run.finished", stop_reason: "completed", assistant_message_id: "a1" }),
    { id: String(seq), data: "[DONE]" },
  ];
}

function fold(frames, run = newRun()) {
  for (const f of frames) applyFrame(run, f);
  return run;
}

test("a whole Deep Think run folds into its plan, sub-tasks, synthesis and report", () => {
  const frames = fullRun();
  const run = newRun();
  const phases = [];
  for (const f of frames) {
    const changes = applyFrame(run, f);
    if (changes.includes("deepThink")) phases.push(run.deepThink.phase);
  }
  const deep = run.deepThink;
  assert.equal(deep.title, "Rust web servers");
  assert.deepEqual(deep.discovery, { mode: "target_focused", message: "Read 3 pages", pagesFetched: 3, siteMap: "/ /a /b", done: true });
  assert.deepEqual(deep.subtasks.map((t) => [t.id, t.query, t.index, t.state]), [
    ["1", "actix-web performance", 0, "done"],
    ["2", "axum ergonomics", 1, "budget"],
    ["3", "deployment stories", 2, "failed"],
  ]);
  assert.equal(deep.subtasks[2].error, "upstream exploded");
  assert.equal(deep.subtasks[0].sources, 2);
  assert.deepEqual(deep.subtasks[0].events.map((e) => e.label), ["Searching “actix benchmarks”…"]);
  assert.deepEqual(deep.subtasks[1].events.map((e) => e.label), ["Reading https://docs.rs/axum…"]);
  assert.equal(run.progress, null, "research under a lone sub-task is shown there, not in the general line");
  assert.equal(run.tools.length, 1, "tool calls stay in the run's tool list");
  assert.equal(deep.synthesis, "Synthesizing final report...");
  assert.deepEqual(deep.structured, [{ type: "comparison_table", title: "Servers compared", message: "Made a table" }]);
  assert.equal(deep.artifactName, "deep-think-20261124-101500.md");
  assert.equal(deep.phase, "done");
  assert.equal(run.text, "# Rust web servers\n\nActix is fast [1].");
  assert.equal(run.artifacts[0].identifier, "deep-think-20261124-101500.md");
  assert.deepEqual([...new Set(phases)], ["discovery", "planning", "research", "synthesizing", "done"]);
  assert.ok(run.done);
});

test("a plan without discovery starts in research, and a fatal error fails the run", () => {
  seq = 0;
  const run = fold([frame(plan), frame(started("1", 0))]);
  assert.equal(run.deepThink.phase, "research");
  assert.deepEqual(run.deepThink.subtasks.map((t) => t.state), ["running", "waiting", "waiting"]);
  applyFrame(run, frame(completed("1", 0, "failed", { error: "no results" })));
  assert.equal(run.deepThink.subtasks[0].state, "failed");
  assert.equal(run.deepThink.subtasks[0].error, "no results");
  applyFrame(run, frame({ type: "x_deep_think.error", message: "planner gave up" }));
  assert.equal(run.deepThink.phase, "failed");
  assert.equal(run.deepThink.error, "planner gave up");
});

test("with two sub-tasks running, research events go to the general progress line", () => {
  seq = 0;
  const run = fold([frame(plan), frame(started("1", 0)), frame(started("2", 1)), frame(searching("who is faster"))]);
  assert.deepEqual(run.deepThink.subtasks.map((t) => t.state), ["running", "running", "waiting"]);
  assert.ok(run.deepThink.subtasks.every((t) => t.events.length === 0));
  assert.equal(run.progress, "Searching “who is faster”…");
  applyFrame(run, frame(completed("1", 0)));
  applyFrame(run, frame(searching("axum extractors")));
  assert.deepEqual(run.deepThink.subtasks[1].events.map((e) => e.label), ["Searching “axum extractors”…"], "alone again, it gets them");
});

test("replayed frames leave the same Deep Think state", () => {
  const frames = fullRun();
  const once = fold(frames).deepThink;
  const twice = newRun();
  for (const f of frames) {
    applyFrame(twice, f);
    applyFrame(twice, f);
  }
  assert.deepEqual(twice.deepThink, once, "each frame applied twice");
  const again = fold(frames, fold(frames));
  assert.deepEqual(again.deepThink, once, "the whole stream replayed onto the run");
});

test("the panel says each sub-task's state and the phase in words", async () => {
  const { subtaskState, phaseLine, summaryLine } = await import("../src/conversation/deepthink.js");
  const run = fold(fullRun());
  const deep = run.deepThink;
  assert.deepEqual(deep.subtasks.map(subtaskState), ["done, 2 sources", "stopped: out of budget", "failed: upstream exploded"]);
  assert.equal(summaryLine(deep), "3 sub-tasks: 1 done, 1 failed, 1 out of budget");
  assert.equal(phaseLine(deep), "Report saved as deep-think-20261124-101500.md.");
  seq = 0;
  const early = fold([frame(plan), frame(started("1", 0))]).deepThink;
  assert.equal(subtaskState(early.subtasks[0]), "running");
  assert.equal(subtaskState(early.subtasks[1]), "waiting");
  assert.equal(phaseLine(early), "Researching: 0 of 3 sub-tasks finished…");
  assert.equal(phaseLine({ ...early, phase: "synthesizing" }), "Synthesizing report…");
});
