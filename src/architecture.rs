//! The architecture test: modules sit on floors, and a module imports only from its own floor
//! or lower ones, never from above. It reads every `src/**/*.rs` and looks at each `crate::…`
//! path outside comments, so a new upward import fails here, not in review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module's floor, lowest first. ARCHITECTURE.md draws the same map.
const FLOORS: [(&str, u8); 25] = [
    ("error", 0),
    ("allocator", 0),
    ("cluster", 0),
    ("storage", 0),
    ("metrics", 0),
    ("os_limits", 0),
    ("config", 0),
    ("db", 0),
    ("telemetry", 0),
    ("ssrf", 0),
    ("llm", 10),
    ("retrieval", 10),
    ("run", 15),
    ("auth", 20),
    ("chat", 20),
    ("documents", 20),
    ("tools", 30),
    ("agent", 40),
    ("supervisor", 50),
    ("state", 60),
    ("http", 70),
    ("startup", 80),
    ("cli", 90),
    ("architecture", 100),
    ("lib", 100),
];

fn floor(module: &str) -> Option<u8> {
    FLOORS
        .iter()
        .find(|(name, _)| *name == module)
        .map(|(_, floor)| *floor)
}

/// The top-level module a source file belongs to.
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap_or(file);
    let first = relative
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_string()
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The top-level modules a piece of code names through `crate::`: `crate::a::…` and each
/// first segment of `crate::{a, b::c}`.
fn crate_modules(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut modules = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        rest = &rest[at + "crate::".len()..];
        // `$crate::` in macros, or an identifier ending in `crate` (`other_crate::`).
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // Split the group at its top-level commas, up to its matching brace.
            let mut depth = 0usize;
            let mut start = 0usize;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        modules.insert(ident(group[start..i].trim()));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        modules.insert(ident(group[start..i].trim()));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            modules.insert(ident(rest));
        }
    }
    modules.retain(|m| !m.is_empty());
    modules
}

/// The code of a file without its comments (line comments; doc comments are line comments).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every upward import in the tree at `src`: `file: module (floor) imports module (floor)`.
fn upward_imports(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let module = module_of(src, &file);
        // The binary's entry point sits above everything; this file names modules in strings.
        if module == "main" || module == "architecture" {
            continue;
        }
        let Some(own) = floor(&module) else {
            found.push(format!("{}: module {module} has no floor", file.display()));
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for imported in crate_modules(&without_comments(&text)) {
            match floor(&imported) {
                Some(theirs) if theirs > own => found.push(format!(
                    "{}: {module} (floor {own}) imports {imported} (floor {theirs})",
                    file.display()
                )),
                Some(_) => {}
                None => found.push(format!(
                    "{}: imports crate::{imported}, which has no floor",
                    file.display()
                )),
            }
        }
    }
    found
}

/// A file of `agent/` as a module path under `agent` (`tool_round/tests.rs`: `tool_round`,
/// `tests`; a `mod.rs` is its folder's module).
fn agent_module(agent: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(agent).unwrap_or(file);
    let mut module: Vec<String> = relative
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    if module.last().is_some_and(|m| m == "mod") {
        module.pop();
    }
    module
}

/// The direct submodules of `agent` (a file `x.rs` or a folder `x/`) each file of one imports
/// (through `super::` or `crate::agent::`), and whether it imports `crate::tools::browser`:
/// the import graph among `agent`'s direct submodules, by file.
struct AgentImports {
    /// Each file, its module path under `agent`, the submodules it imports and whether it
    /// names the browser's tools.
    files: Vec<(PathBuf, Vec<String>, BTreeSet<String>, bool)>,
}

impl AgentImports {
    fn read(src: &Path) -> Self {
        let agent = src.join("agent");
        let mut paths = Vec::new();
        rust_files(&agent, &mut paths);
        paths.sort();
        let is_submodule =
            |name: &str| agent.join(format!("{name}.rs")).is_file() || agent.join(name).is_dir();
        let mut files = Vec::new();
        for file in paths {
            let module = agent_module(&agent, &file);
            let code = without_comments(&std::fs::read_to_string(&file).unwrap_or_default());
            let imported = module_paths(&code, "agent", Some(&module))
                .into_iter()
                .filter_map(|path| path.into_iter().next())
                .filter(|name| is_submodule(name) && module.first() != Some(name))
                .collect();
            let browser = module_paths(&code, "tools", None)
                .iter()
                .any(|path| path.first().is_some_and(|m| m == "browser"));
            files.push((file, module, imported, browser));
        }
        Self { files }
    }

    /// Which direct submodules each direct submodule imports.
    fn edges(&self) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
        let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
        for (_, module, imported, _) in &self.files {
            let Some(node) = module.first() else {
                continue;
            };
            let targets = edges.entry(vec![node.clone()]).or_default();
            targets.extend(imported.iter().map(|name| vec![name.clone()]));
        }
        edges
    }

    /// `from` and every direct submodule it imports, directly or through others.
    fn reached_from(&self, from: &str) -> BTreeSet<String> {
        let edges = self.edges();
        let mut reached = BTreeSet::new();
        let mut next = vec![from.to_string()];
        while let Some(node) = next.pop() {
            if reached.insert(node.clone()) {
                let targets = edges.get(&vec![node]).into_iter().flatten();
                next.extend(targets.map(|target| target[0].clone()));
            }
        }
        reached
    }
}

/// Within `agent`, the loop knows no driver and no tool: nothing the loop (`loop_actor`)
/// imports, directly or through other submodules of `agent`, is Deep Think or imports the
/// browser's tools (Deep Think drives the loop through the run kernel's types; a tool's images
/// reach it through `Tool::images`). And a `RunSpec` is made only by the kernel's constructor.
/// Each breach: `file: what`.
fn agent_kernel_breaches(src: &Path) -> Vec<String> {
    let agent = src.join("agent");
    let imports = AgentImports::read(src);
    let the_loop = imports.reached_from("loop_actor");
    let mut found = Vec::new();
    for (file, module, imported, browser) in &imports.files {
        let in_loop = module.first().is_some_and(|node| the_loop.contains(node));
        if in_loop && imported.contains("deep_think") {
            found.push(format!("{}: the loop imports deep_think", file.display()));
        }
        if in_loop && *browser {
            found.push(format!(
                "{}: the loop imports tools::browser",
                file.display()
            ));
        }
        let code = without_comments(&std::fs::read_to_string(file).unwrap_or_default());
        // A literal, not a return type (`-> RunSpec {`) or an impl block.
        let literal = code.match_indices("RunSpec {").any(|(at, _)| {
            let before = code[..at].trim_end();
            !["->", "impl", "for"].iter().any(|w| before.ends_with(w))
        });
        if *file != agent.join("kernel.rs") && literal {
            found.push(format!(
                "{}: makes a RunSpec outside RunSpec::new",
                file.display()
            ));
        }
    }
    found
}

#[test]
fn nothing_the_loop_imports_reaches_deep_think_or_the_browser() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let the_loop = AgentImports::read(&src).reached_from("loop_actor");
    for part in ["model_call", "tool_round", "loop_state", "kernel", "images"] {
        assert!(
            the_loop.contains(part),
            "{part} is the loop's: {the_loop:?}"
        );
    }
    let breaches = agent_kernel_breaches(&src);
    assert!(
        breaches.is_empty(),
        "the agent's run kernel (see ARCHITECTURE.md):\n{}",
        breaches.join("\n")
    );
}

#[test]
fn the_loop_reaching_deep_think_or_the_browser_and_a_hand_made_run_spec_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    std::fs::create_dir_all(agent.join("deep_think")).unwrap();
    std::fs::create_dir_all(agent.join("workflow")).unwrap();
    std::fs::write(
        agent.join("loop_actor.rs"),
        "use super::{images::shown, kernel::RunSpec, tool_round::run_tools};\n",
    )
    .unwrap();
    // The circle the kernel broke, one step away: a part of the loop importing Deep Think's
    // sub-task bounds.
    std::fs::write(
        agent.join("tool_round.rs"),
        "pub subtask: Option<super::deep_think::SubtaskBounds>,\n",
    )
    .unwrap();
    std::fs::write(
        agent.join("images.rs"),
        "use crate::tools::{browser::Screenshots, Tool};\n",
    )
    .unwrap();
    std::fs::write(
        agent.join("deep_think/subtask.rs"),
        "use super::super::loop_actor::run_loop;\nfn spec() -> RunSpec {\n    RunSpec { subtask: None, ..base }\n}\n",
    )
    .unwrap();
    // Outside the loop, naming Deep Think or the browser is no breach; nor is the word.
    std::fs::write(
        agent.join("workflow/engine.rs"),
        "use crate::agent::{deep_think::SpawnSubtask, loop_actor};\nuse crate::tools::browser;\n",
    )
    .unwrap();
    std::fs::write(
        agent.join("kernel.rs"),
        "// deep_think drives the loop\nconst NAME: &str = \"deep_think\";\nSelf { log }; RunSpec { log }\n",
    )
    .unwrap();
    let found = agent_kernel_breaches(dir.path());
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(
        found[0].contains("deep_think/subtask.rs: makes a RunSpec"),
        "{found:?}"
    );
    assert!(
        found[1].contains("images.rs: the loop imports tools::browser"),
        "{found:?}"
    );
    assert!(
        found[2].contains("tool_round.rs: the loop imports deep_think"),
        "{found:?}"
    );
}

/// The import circles among `agent`'s direct submodules: each as `a -> b -> … -> a`.
fn agent_import_circles(src: &Path) -> Vec<String> {
    circles(&AgentImports::read(src).edges())
}

#[test]
fn no_two_submodules_of_agent_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let circles = agent_import_circles(&src);
    assert!(
        circles.is_empty(),
        "import circles in src/agent (see ARCHITECTURE.md):\n{}",
        circles.join("\n")
    );
}

#[test]
fn an_agent_import_circle_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    std::fs::create_dir_all(agent.join("tool_round")).unwrap();
    std::fs::create_dir_all(agent.join("deep_think")).unwrap();
    std::fs::write(
        agent.join("mod.rs"),
        "pub mod kernel;\npub mod tool_round;\n",
    )
    .unwrap();
    // The two circles the tool cache's own module broke: the kernel and a round, each needing
    // the other's type; a round's tests and the helpers that made a round's cache.
    std::fs::write(
        agent.join("kernel.rs"),
        "use super::tool_round::ToolCache;\nuse super::rate_limit::Limiter;\n",
    )
    .unwrap();
    std::fs::write(agent.join("rate_limit.rs"), "use std::sync::Arc;\n").unwrap();
    std::fs::write(
        agent.join("tool_round.rs"),
        "use super::kernel::RunSpec;\nmod tests;\n",
    )
    .unwrap();
    std::fs::write(
        agent.join("tool_round/tests.rs"),
        "use super::super::test_support::spec;\nuse super::run_tools;\n",
    )
    .unwrap();
    std::fs::write(
        agent.join("test_support.rs"),
        "use crate::agent::{kernel::RunSpec, tool_round::new_tool_cache};\n",
    )
    .unwrap();
    // One way only: Deep Think drives the loop.
    std::fs::write(
        agent.join("deep_think/subtask.rs"),
        "use super::super::kernel::RunSpec;\nuse super::plan::Plan;\n",
    )
    .unwrap();
    let circles = agent_import_circles(dir.path());
    assert_eq!(
        circles,
        [
            "kernel -> tool_round -> kernel",
            "kernel -> tool_round -> test_support -> kernel",
            "test_support -> tool_round -> test_support",
        ],
        "{circles:?}"
    );
}

/// Files other than `http/errors.rs` that turn an error into an HTTP one (`impl … for
/// AppError`, `ResponseError`): there is one place for that.
fn error_conversions_elsewhere(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let home = src.join("http").join("errors.rs");
    files
        .into_iter()
        .filter(|file| *file != home && !file.ends_with("architecture.rs"))
        .filter(|file| {
            let code = without_comments(&std::fs::read_to_string(file).unwrap_or_default());
            code.contains("for AppError")
                || code.contains("for crate::error::AppError")
                || code.contains("impl ResponseError")
        })
        .map(|file| file.display().to_string())
        .collect()
}

#[test]
fn errors_become_http_errors_in_one_place() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let elsewhere = error_conversions_elsewhere(&src);
    assert!(
        elsewhere.is_empty(),
        "conversions into AppError belong in src/http/errors.rs:\n{}",
        elsewhere.join("\n")
    );
    // The check finds one where it should not be.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("llm")).unwrap();
    std::fs::write(
        dir.path().join("llm/error.rs"),
        "impl From<LlmError> for AppError {}\n",
    )
    .unwrap();
    assert_eq!(error_conversions_elsewhere(dir.path()).len(), 1);
}

#[test]
fn no_module_imports_one_on_a_higher_floor() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let upward = upward_imports(&src);
    assert!(
        upward.is_empty(),
        "imports against the floors (see ARCHITECTURE.md):\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_reader_finds_plain_grouped_and_nested_imports_but_not_comments() {
    let code = without_comments(
        "use crate::chat::session::ChatSession;\n\
         use crate::{agent::events::RunEvent, tools::{Tool, ToolError}, state};\n\
         // crate::http is only mentioned here\n\
         let x = crate::llm::wire::Usage::default(); // crate::startup too\n\
         macro_rules! m { () => { $crate::db::connect() } }",
    );
    let found: Vec<String> = crate_modules(&code).into_iter().collect();
    assert_eq!(found, ["agent", "chat", "llm", "state", "tools"]);
}

#[test]
fn an_import_from_a_higher_floor_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tools")).unwrap();
    std::fs::write(
        dir.path().join("tools/chat_context.rs"),
        // The circle the run module broke: a tool importing the loop's events.
        "use crate::agent::events::RunEvent;\nuse crate::chat::session::ChatSession;\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("db.rs"), "use crate::config::Config;\n").unwrap();
    let found = upward_imports(dir.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("tools (floor 30) imports agent (floor 40)"));
}

/// The node of the import graph a file of `http/` belongs to: its path under `http/`, with a
/// resource's own folder of submodules (`openai/responses/encode.rs` beside
/// `openai/responses.rs`) folded into the resource, and a `mod.rs` into its folder.
fn http_node(http: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(http).unwrap_or(file);
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".rs").to_string();
    }
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    // The first folder on the way that is a resource's (a file of its name is beside it).
    let mut dir = http.to_path_buf();
    for (i, part) in parts.iter().enumerate().take(parts.len().saturating_sub(1)) {
        if dir.join(format!("{part}.rs")).is_file() {
            return parts[..=i].to_vec();
        }
        dir = dir.join(part);
    }
    parts
}

/// The module paths a piece of code names through `super::` (from `module`) or
/// `crate::http::`, each as segments under `http`; one level of `{…}` groups is expanded.
fn http_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    module_paths(code, "http", Some(module))
}

/// The module paths a piece of code names through `crate::{root}::` and, from `module` (a
/// module of `root`, as segments under it), through `super::`, each as segments under
/// `root`; one level of `{…}` groups is expanded.
fn module_paths(code: &str, root: &str, module: Option<&[String]>) -> Vec<Vec<String>> {
    let absolute = format!("crate::{root}::");
    // `a::b::c…` up to the first character that is neither part of a name nor `::`.
    let segment = |s: &str| -> Vec<String> {
        let mut path = Vec::new();
        for piece in s.split("::") {
            let name: String = piece
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let whole = name.len() == piece.len();
            if !name.is_empty() {
                path.push(name);
            }
            if !whole || path.is_empty() {
                break;
            }
        }
        path
    };
    let mut found = Vec::new();
    let relative = module.map(|_| code.match_indices("super::")).into_iter();
    for (start, prefix) in relative
        .flatten()
        .map(|(at, _)| (at, "super"))
        .chain(code.match_indices(&absolute).map(|(at, _)| (at, "crate")))
    {
        let before = code[..start].chars().last();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut base: Vec<String> = Vec::new();
        let mut rest = &code[start..];
        if prefix == "crate" {
            rest = &rest[absolute.len()..];
        } else {
            base = module.unwrap_or_default().to_vec();
            while let Some(next) = rest.strip_prefix("super::") {
                base.pop();
                rest = next;
            }
        }
        let tails: Vec<String> = match rest.find(['{', ';', ',', ')', ' ', '\n', '(']) {
            Some(at) if rest[at..].starts_with('{') => {
                let group = &rest[at + 1..];
                let end = group.find('}').unwrap_or(group.len());
                group[..end]
                    .split(',')
                    .map(|item| format!("{}{}", &rest[..at], item.trim()))
                    .collect()
            }
            _ => vec![rest.to_string()],
        };
        for tail in tails {
            let mut path = base.clone();
            path.extend(segment(&tail));
            found.push(path);
        }
    }
    found
}

/// The node a module path under `http` resolves to: its longest prefix that is a file or a
/// folder there.
fn http_target(http: &Path, path: &[String]) -> Vec<String> {
    let mut longest = 0;
    for len in 1..=path.len() {
        let at = path[..len]
            .iter()
            .fold(http.to_path_buf(), |p, s| p.join(s));
        let file = at.with_extension("rs");
        if file.is_file() || at.is_dir() {
            longest = len;
        } else {
            break;
        }
    }
    let at = path[..longest]
        .iter()
        .fold(http.to_path_buf(), |p, s| p.join(s));
    let file = if at.with_extension("rs").is_file() {
        at.with_extension("rs")
    } else {
        at.join("mod.rs")
    };
    http_node(http, &file)
}

/// The import circles between the files of `http/` (a resource with its own submodules counts
/// as one): each as `a -> b -> … -> a`.
fn http_import_circles(src: &Path) -> Vec<String> {
    let http = src.join("http");
    let mut files = Vec::new();
    rust_files(&http, &mut files);
    files.sort();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for file in &files {
        let node = http_node(&http, file);
        let relative = file.strip_prefix(&http).unwrap_or(file);
        let mut module: Vec<String> = relative
            .components()
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .collect();
        if module.last().is_some_and(|m| m == "mod") {
            module.pop();
        }
        let code = without_comments(&std::fs::read_to_string(file).unwrap_or_default());
        for path in http_paths(&code, &module) {
            let target = http_target(&http, &path);
            if target != node && !node.starts_with(&target) && !target.starts_with(&node) {
                edges.entry(node.clone()).or_default().insert(target);
            }
        }
    }
    circles(&edges)
}

/// The circles of an import graph, each as `a -> b -> … -> a`, told once from its least node.
fn circles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<String> {
    // A circle is an edge back to a node on the current path of a depth-first walk.
    let mut circles = BTreeSet::new();
    fn walk(
        node: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        path: &mut Vec<Vec<String>>,
        done: &mut BTreeSet<Vec<String>>,
        circles: &mut BTreeSet<String>,
    ) {
        if let Some(at) = path.iter().position(|n| n == node) {
            // Told once, from its least node, whichever node the walk entered it by.
            let mut circle: Vec<String> = path[at..].iter().map(|n| n.join("/")).collect();
            let least = (0..circle.len()).min_by_key(|&i| &circle[i]).unwrap_or(0);
            circle.rotate_left(least);
            circle.push(circle[0].clone());
            circles.insert(circle.join(" -> "));
            return;
        }
        if !done.insert(node.clone()) {
            return;
        }
        path.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            walk(next, edges, path, done, circles);
        }
        path.pop();
        done.remove(node);
        done.insert(node.clone());
    }
    let mut done = BTreeSet::new();
    for node in edges.keys() {
        let mut path = Vec::new();
        walk(node, edges, &mut path, &mut done, &mut circles);
        done.clear();
    }
    circles.into_iter().collect()
}

#[test]
fn no_two_files_of_http_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let circles = http_import_circles(&src);
    assert!(
        circles.is_empty(),
        "import circles in src/http (see ARCHITECTURE.md):\n{}",
        circles.join("\n")
    );
}

#[test]
fn an_http_import_circle_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let http = dir.path().join("http");
    std::fs::create_dir_all(http.join("openai/responses")).unwrap();
    std::fs::create_dir_all(http.join("chat_api")).unwrap();
    std::fs::write(http.join("mod.rs"), "mod openai;\n").unwrap();
    std::fs::write(
        http.join("openai/mod.rs"),
        "mod responses;\nmod vector_stores;\n",
    )
    .unwrap();
    std::fs::write(http.join("openai/responses.rs"), "mod target;\n").unwrap();
    // A submodule reaching for a sibling resource, which reaches back in a group.
    std::fs::write(
        http.join("openai/responses/target.rs"),
        "use super::super::vector_stores::owned;\nuse super::items::x;\n",
    )
    .unwrap();
    std::fs::write(
        http.join("openai/vector_stores.rs"),
        "use crate::http::{chat_api::documents, openai::responses::list_object};\n",
    )
    .unwrap();
    std::fs::write(
        http.join("chat_api/documents.rs"),
        "use super::super::json_error;\n",
    )
    .unwrap();
    let circles = http_import_circles(dir.path());
    assert_eq!(
        circles,
        ["openai/responses -> openai/vector_stores -> openai/responses"],
        "{circles:?}"
    );
}

/// Files of `http/` that reach the database themselves: a query builder (`sea_orm`'s traits) or
/// an entity's table (`entities::x::Entity`, `Column`, `ActiveModel`). A handler parses, calls
/// one function below, and responds.
fn http_database_access(src: &Path) -> Vec<String> {
    let http = src.join("http");
    let mut files = Vec::new();
    rust_files(&http, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let code = without_comments(&std::fs::read_to_string(&file).unwrap_or_default());
        let queries = [
            "EntityTrait",
            "QueryFilter",
            "ActiveModelTrait",
            "ColumnTrait",
        ]
        .iter()
        .any(|t| code.contains(t));
        let names_a_table = ["::Entity", "::Column::", "::ActiveModel"]
            .iter()
            .any(|t| code.contains(t));
        if queries || names_a_table || code.contains("Statement::") {
            found.push(file.display().to_string());
        }
    }
    found
}

#[test]
fn http_handlers_reach_the_database_only_through_the_floors_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = http_database_access(&src);
    assert!(
        found.is_empty(),
        "files of src/http querying the database themselves:\n{}",
        found.join("\n")
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("http")).unwrap();
    std::fs::write(
        dir.path().join("http/chats.rs"),
        "let c = entities::chats::Entity::find().all(db).await?;\n",
    )
    .unwrap();
    assert_eq!(http_database_access(dir.path()).len(), 1);
}

/// Code that deletes a chat's row outside the one teardown (`supervisor/lifecycle.rs`, which
/// calls `Chats::delete_row`, defined in `chat/persistence`).
fn second_teardowns(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let lifecycle = src.join("supervisor").join("lifecycle.rs");
    let persistence = src.join("chat").join("persistence").join("mod.rs");
    let mut found = Vec::new();
    for file in files {
        if file == lifecycle || file.ends_with("architecture.rs") {
            continue;
        }
        let code = without_comments(&std::fs::read_to_string(&file).unwrap_or_default());
        let deletes_rows = code.contains("chats::Entity::delete")
            || code.contains("Entity::delete_by_id(chat")
            || code.contains("DELETE FROM chats");
        let calls_delete_row = code.contains(".delete_row(");
        if (deletes_rows && file != persistence) || calls_delete_row {
            found.push(file.display().to_string());
        }
    }
    found
}

#[test]
fn a_chat_is_deleted_only_by_the_one_teardown() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = second_teardowns(&src);
    assert!(
        found.is_empty(),
        "a chat is deleted only by supervisor/lifecycle.rs (forget_chat):\n{}",
        found.join("\n")
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("http")).unwrap();
    std::fs::write(
        dir.path().join("http/conversations.rs"),
        "state.chats().delete_row(&chat.id).await?;\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("startup.rs"),
        "chats::Entity::delete_by_id(id).exec(db).await?;\n",
    )
    .unwrap();
    assert_eq!(second_teardowns(dir.path()).len(), 2);
}
