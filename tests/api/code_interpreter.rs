//! The code interpreter (issue 46): Python in a bubblewrap sandbox, containers with state and
//! files. Through the official Python SDK on the Responses API (a CSV from `/v1/files`, pandas,
//! a chart cited and read back, the container reused), through the chat API (`x_tools`, the
//! figure kept with the answer, state across turns), a suite of hostile code that must end in
//! error results with nothing escaping, `/v1/containers`, and a server without bubblewrap.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, run_client, spawn_app_with};
use crate::openai_node::node_clients;
use crate::openai_python::python_with_openai;

/// A server whose calls may run `timeout` seconds, in containers of `container_mb`.
async fn app_with(timeout: u64, container_mb: u64) -> TestApp {
    spawn_app_with(|config| {
        config.code_interpreter.timeout_secs = timeout;
        config.code_interpreter.container_mb = container_mb;
    })
    .await
}

/// The tool message the model was sent for `call_id`, as JSON.
fn tool_result(app: &TestApp, call_id: &str) -> Value {
    let received = app.upstream.received();
    let message = received
        .iter()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .unwrap_or_else(|| panic!("no tool result for {call_id}"));
    let content = message["content"].as_str().unwrap();
    serde_json::from_str(content).unwrap_or_else(|err| panic!("{err}: {content}"))
}

const PANDAS: &str = "import pandas as pd\nimport matplotlib.pyplot as plt\n\
df = pd.read_csv('/mnt/data/scores.csv')\nmean = df['score'].mean()\nprint(f'mean={mean}')\n\
df.plot(x='name', y='score')\nplt.savefig('/mnt/data/chart.png')\n";

/// The model's part of the clients' flow: pandas on the CSV, an answer citing the chart, then
/// the second request's call reading the first one's variable.
fn sdk_script() -> Vec<Reply> {
    vec![
        Reply::tool_call("ci_1", "code_interpreter", json!({"code": PANDAS})),
        Reply::text("The mean score is 5.0. See [the chart](sandbox:/mnt/data/chart.png)."),
        Reply::tool_call(
            "ci_2",
            "code_interpreter",
            json!({"code": "print('again', mean)"}),
        ),
        Reply::text("Still 5.0."),
    ]
}

#[actix_web::test]
async fn the_python_sdk_runs_pandas_on_an_uploaded_csv_cites_the_chart_and_reuses_the_container() {
    let python = tokio::task::spawn_blocking(python_with_openai)
        .await
        .unwrap();
    let app = app_with(30, 64).await;
    app.upstream.script(sdk_script());
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/code_interpreter.py");
    let mut command = Command::new(python);
    command.arg(script);
    let saw = run_client(&app, command).await;
    check_sdk(&app, &saw);
}

#[actix_web::test]
async fn the_node_sdk_runs_pandas_on_an_uploaded_csv_cites_the_chart_and_reuses_the_container() {
    let dir = tokio::task::spawn_blocking(node_clients).await.unwrap();
    let app = app_with(30, 64).await;
    app.upstream.script(sdk_script());
    let mut command = Command::new("node");
    command.arg("code_interpreter.mjs").current_dir(dir);
    let saw = run_client(&app, command).await;
    check_sdk(&app, &saw);
}

/// What either SDK saw, and what the model was sent.
fn check_sdk(app: &TestApp, saw: &Value) {
    // The call's events in OpenAI's order, the code streamed whole.
    let kinds: Vec<&str> = saw["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .filter(|k| k.starts_with("response.code_interpreter_call"))
        .collect();
    let deltas = kinds
        .iter()
        .filter(|k| **k == "response.code_interpreter_call_code.delta")
        .count();
    assert!(deltas >= 2, "{kinds:?}");
    let mut expected = vec!["response.code_interpreter_call.in_progress"];
    expected.extend(std::iter::repeat_n(
        "response.code_interpreter_call_code.delta",
        deltas,
    ));
    expected.extend([
        "response.code_interpreter_call_code.done",
        "response.code_interpreter_call.interpreting",
        "response.code_interpreter_call.completed",
    ]);
    assert_eq!(kinds, expected);
    assert_eq!(saw["code_from_deltas"], PANDAS);

    let call = &saw["call"];
    assert_eq!(call["type"], "code_interpreter_call");
    assert_eq!(call["id"], "ci_ci_1");
    assert_eq!(call["status"], "completed");
    assert_eq!(call["code"], PANDAS);
    let container = call["container_id"].as_str().unwrap().to_string();
    assert!(container.starts_with("cntr_"), "{call}");
    let outputs = call["outputs"]
        .as_array()
        .expect("outputs, as include asked");
    assert_eq!(outputs[0]["type"], "logs");
    assert!(
        outputs[0]["logs"].as_str().unwrap().contains("mean=5.0"),
        "{outputs:?}"
    );
    assert!(
        outputs.iter().any(|o| o["type"] == "image"
            && o["url"]
                .as_str()
                .is_some_and(|u| u.starts_with("data:image/png;base64,"))),
        "the figure matplotlib held: {outputs:?}"
    );

    // The answer cites the chart over its link; the bytes are a PNG.
    let text = saw["text"].as_str().unwrap();
    let chart = saw["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["type"] == "container_file_citation" && a["filename"] == "chart.png")
        .expect("the chart is cited")
        .clone();
    assert_eq!(chart["container_id"], container.as_str());
    let chars: Vec<char> = text.chars().collect();
    let cited: String = chars[chart["start_index"].as_u64().unwrap() as usize
        ..chart["end_index"].as_u64().unwrap() as usize]
        .iter()
        .collect();
    assert_eq!(cited, "[the chart](sandbox:/mnt/data/chart.png)");
    assert_eq!(saw["png_head"], "iVBORw0KGgo=", "a PNG signature");
    assert!(saw["png_bytes"].as_u64().unwrap() > 1000, "{saw}");
    assert_eq!(
        saw["files"],
        json!(["/mnt/data/chart.png", "/mnt/data/scores.csv"])
    );
    assert_eq!(saw["container"]["status"], "running");
    assert_eq!(
        saw["container"]["expires_after"],
        json!({"anchor": "last_active_at", "minutes": 20})
    );

    // The second request ran in the same container and read the first one's variable.
    let second = &saw["second"];
    assert_eq!(second["container_id"], container.as_str());
    assert!(
        second["outputs"][0]["logs"]
            .as_str()
            .unwrap()
            .contains("again 5.0"),
        "{second}"
    );
    // The model read the logs and the files' names, never the figure's bytes.
    let first = tool_result(app, "ci_1");
    assert!(first["logs"].as_str().unwrap().contains("mean=5.0"));
    assert!(!first.to_string().contains("base64"), "{first}");
    assert_eq!(saw["made"]["object"], "container");
    assert_eq!(saw["made"]["name"], "scratch");
}

#[actix_web::test]
async fn a_chat_runs_code_it_names_in_x_tools_keeps_the_figure_and_its_state_across_turns() {
    let app = app_with(30, 64).await;
    let chat = app.new_chat().await;
    // A document uploaded to the chat is in its container.
    let uploaded = crate::documents::upload(
        &app,
        &chat,
        "prices.csv",
        b"item,price\na,19\nb,23\n".to_vec(),
    )
    .await;
    assert!(uploaded.status().is_success(), "{uploaded:?}");
    app.upstream.script([
        Reply::tool_call(
            "c1",
            "code_interpreter",
            json!({"code": "import matplotlib.pyplot as plt\nimport pandas as pd\n\
                x = 21\nplt.plot([1, 2, 3])\n\
                print('set', pd.read_csv('/mnt/data/prices.csv')['price'].sum())"}),
        ),
        Reply::text("Drawn."),
        Reply::tool_call("c2", "code_interpreter", json!({"code": "print(x * 2)"})),
        Reply::text("42."),
    ]);
    let frames = app
        .send(
            &chat,
            json!({"content": "draw", "web_search_options": {"x_tools": ["code_interpreter"]}}),
        )
        .await;
    let output = frames
        .iter()
        .map(|f| f.json())
        .find(|data| data["type"] == "x_code_interpreter.output")
        .expect("the call's output streams");
    assert_eq!(output["call_id"], "c1");
    assert_eq!(output["logs"], "set 42\n", "{output}");
    assert_eq!(output["x_images"].as_array().unwrap().len(), 1);
    // The figure is a part of the stored answer.
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    let answer = messages["data"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "assistant")
        .unwrap()
        .clone();
    assert!(
        answer["parts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["type"] == "image"),
        "{answer}"
    );
    // The next turn uses the same container: x is still there.
    app.send(
        &chat,
        json!({"content": "double", "web_search_options": {"x_tools": ["code_interpreter"]}}),
    )
    .await;
    assert!(
        tool_result(&app, "c2")["logs"]
            .as_str()
            .unwrap()
            .contains("42"),
        "{}",
        tool_result(&app, "c2")
    );
    assert_eq!(
        tool_result(&app, "c1")["container_id"],
        tool_result(&app, "c2")["container_id"]
    );
    // Deleting the chat removes its container.
    let container = tool_result(&app, "c1")["container_id"]
        .as_str()
        .unwrap()
        .to_string();
    let deleted = app
        .request(Method::DELETE, &format!("/chat/api/chats/{chat}"))
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{deleted:?}");
    let gone = app
        .request(Method::GET, &format!("/v1/containers/{container}"))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    assert!(
        !app.state
            .launcher
            .containers
            .is_running(&entities::ids::ContainerId::from_string(container))
    );
}

/// Runs `code` as the model's call `id` in the Responses container `container`; returns the
/// result the model was sent and how long the request took.
async fn run_code(app: &TestApp, container: &str, id: &str, code: &str) -> (Value, Duration) {
    app.upstream.script_for(
        id,
        [
            Reply::tool_call(id, "code_interpreter", json!({"code": code})),
            Reply::text("done"),
        ],
    );
    let started = Instant::now();
    let answer: Value = app
        .openai()
        .create_response()
        .json(&json!({"model": "fake-model", "input": id,
            "tools": [{"type": "code_interpreter", "container": container}]}))
        .read_json()
        .await;
    assert_eq!(answer["status"], "completed", "{answer}");
    let result = tool_result(app, id);
    eprintln!(
        "{id}: {}",
        result.to_string().chars().take(300).collect::<String>()
    );
    (result, started.elapsed())
}

/// The user ids of every process on the host, read from `/proc`.
fn process_uids() -> Vec<u32> {
    let mut uids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(status) = std::fs::read_to_string(entry.path().join("status"))
            && let Some(line) = status.lines().find(|l| l.starts_with("Uid:"))
            && let Some(uid) = line.split_whitespace().nth(1)
        {
            uids.push(uid.parse().unwrap_or(0));
        }
    }
    uids
}

#[actix_web::test]
async fn hostile_code_ends_in_error_results_and_nothing_escapes() {
    // Users of its own, so the check at the end sees this test's sandboxes alone.
    let app = spawn_app_with(|config| {
        config.code_interpreter.timeout_secs = 4;
        config.code_interpreter.container_mb = 64;
        config.code_interpreter.first_uid = 900_000;
    })
    .await;
    let port = app.address.rsplit(':').next().unwrap().to_string();
    let data_dir = app.data_dir.path().display().to_string();
    let make = |name: &'static str| {
        let app = &app;
        async move {
            let made: Value = app
                .request(Method::POST, "/v1/containers")
                .json(&json!({"name": name}))
                .read_json()
                .await;
            made["id"].as_str().unwrap().to_string()
        }
    };
    let (mine, other) = (make("mine").await, make("other").await);
    // Another container's secret, which none of the code below may read.
    let (secret, _) = run_code(
        &app,
        &other,
        "h_secret",
        "open('/mnt/data/secret.txt', 'w').write('s3cret')\nprint('kept')",
    )
    .await;
    assert!(
        secret["logs"].as_str().unwrap().contains("kept"),
        "{secret}"
    );

    let net = format!(
        "import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('connected')"
    );
    let (result, _) = run_code(&app, &mine, "h_net", &net).await;
    assert!(result["error"].is_string(), "{result}");
    assert!(!result["logs"].as_str().unwrap().contains("connected"));

    let (result, _) = run_code(&app, &mine, "h_shadow", "print(open('/etc/shadow').read())").await;
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("FileNotFoundError"),
        "{result}"
    );
    let (result, _) = run_code(
        &app,
        &mine,
        "h_data",
        &format!("import os\nprint(os.listdir({data_dir:?}))"),
    )
    .await;
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("FileNotFoundError"),
        "{result}"
    );
    let (result, _) = run_code(
        &app,
        &mine,
        "h_other",
        "import glob\nfound = [p for root in ('/mnt', '/tmp', '/dev', '/home', '/root', '/var')\n\
         for p in glob.glob(root + '/**/*', recursive=True)]\n\
         found += glob.glob('/proc/*/root/mnt/data/*')\nprint('looked', 'secret.txt' in str(found))",
    )
    .await;
    assert_eq!(result["logs"], "looked False\n", "{result}");

    // Nothing is writable but /mnt/data and /tmp, and no namespace can be made inside.
    let (result, _) = run_code(&app, &mine, "h_root", "open('/escape', 'w').write('x')").await;
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("Read-only file system"),
        "{result}"
    );
    let (result, _) = run_code(
        &app,
        &mine,
        "h_userns",
        "import subprocess\nprint(subprocess.run(['unshare', '-Ur', 'id'], capture_output=True).returncode)",
    )
    .await;
    assert_ne!(result["logs"], "0\n", "{result}");
    // What a call leaves running in the background ends with it.
    run_code(
        &app,
        &mine,
        "h_background",
        "import subprocess\nsubprocess.Popen(['sleep', '300'])",
    )
    .await;
    let (result, _) = run_code(
        &app,
        &mine,
        "h_after_background",
        "import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))",
    )
    .await;
    assert_eq!(
        result["logs"], "[1, 2]\n",
        "only init and the interpreter: {result}"
    );

    let (result, _) = run_code(&app, &mine, "h_memory", "x = bytearray(8 * 1024 ** 3)").await;
    assert_eq!(result["limit"], "memory", "{result}");
    // Many processes, each within its own bound, are stopped together past the sandbox's.
    let (result, _) = run_code(
        &app,
        &mine,
        "h_memory_many",
        "import subprocess, time\n\
         hogs = [subprocess.Popen(['python3', '-c', \"x = b'x' * (400 * 2 ** 20)\\nimport time\\ntime.sleep(30)\"]) for _ in range(4)]\n\
         time.sleep(20)",
    )
    .await;
    assert_eq!(result["code"], "code_interpreter_memory_limit", "{result}");

    let (result, _) = run_code(
        &app,
        &mine,
        "h_file",
        "with open('/mnt/data/big', 'wb') as f:\n    for _ in range(2048):\n        f.write(b'x' * 1024 * 1024)",
    )
    .await;
    assert!(
        result["limit"] == "file_size" || result["limit"] == "container_size",
        "{result}"
    );

    let (result, _) = run_code(&app, &mine, "h_print", "print('y' * 100_000_000)").await;
    let logs = result["logs"].as_str().unwrap();
    assert!(
        logs.contains("[output truncated"),
        "{}",
        &logs[logs.len() - 200..]
    );
    assert!(logs.len() < 100_000, "{}", logs.len());

    let (result, _) = run_code(
        &app,
        &mine,
        "h_fork",
        "import os, time\nwhile True:\n    os.fork()",
    )
    .await;
    assert!(
        result["limit"] == "processes" || result["code"] == "code_interpreter_timeout",
        "{result}"
    );

    // A call that spins forever is stopped at the limit, while another chat answers at once.
    let spinning = run_code(&app, &mine, "h_spin", "while True:\n    pass");
    let other_chat = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let chat = app.new_chat().await;
        app.upstream.script_for("meanwhile", [Reply::text("here")]);
        let started = Instant::now();
        app.send_text(&chat, "meanwhile").await;
        started.elapsed()
    };
    let ((result, took), meanwhile) = tokio::join!(spinning, other_chat);
    assert_eq!(result["code"], "code_interpreter_timeout", "{result}");
    assert!(took >= Duration::from_secs(4), "{took:?}");
    assert!(meanwhile < Duration::from_secs(3), "{meanwhile:?}");

    let (result, _) = run_code(
        &app,
        &mine,
        "h_kill",
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nos.kill(1, signal.SIGKILL)\nos.kill(os.getpid(), signal.SIGKILL)",
    )
    .await;
    assert_eq!(result["code"], "code_interpreter_ended", "{result}");

    // The container still works (a new interpreter, its files kept), and so does the server.
    let (result, _) = run_code(
        &app,
        &other,
        "h_after",
        "print(open('/mnt/data/secret.txt').read())",
    )
    .await;
    assert!(
        result["logs"].as_str().unwrap().contains("s3cret"),
        "{result}"
    );
    let health = app.request(Method::GET, "/health").send().await.unwrap();
    assert!(health.status().is_success());

    // Nothing of theirs outlives the containers.
    for id in [&mine, &other] {
        let deleted = app
            .request(Method::DELETE, &format!("/v1/containers/{id}"))
            .send()
            .await
            .unwrap();
        assert_eq!(deleted.status(), 200);
    }
    let first = app.state.launcher.containers.config().first_uid;
    let range = first..first + 65_536;
    crate::helpers::eventually(
        "the sandboxes' processes to end",
        Duration::from_secs(10),
        || async { (!process_uids().iter().any(|uid| range.contains(uid))).then_some(()) },
    )
    .await;
}

#[actix_web::test]
async fn containers_and_their_files_are_their_makers_alone() {
    let app = app_with(30, 64).await;
    let made: Value = app
        .request(Method::POST, "/v1/containers")
        .json(&json!({"name": "box"}))
        .read_json()
        .await;
    let id = made["id"].as_str().unwrap();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(b"hello".to_vec()).file_name("note.txt"),
    );
    let file: Value = app
        .request(Method::POST, &format!("/v1/containers/{id}/files"))
        .multipart(form)
        .read_json()
        .await;
    assert_eq!(file["object"], "container.file");
    assert_eq!(file["path"], "/mnt/data/note.txt");
    assert_eq!(file["source"], "user");
    // A file id that is no file of the user's is refused.
    let unknown = app
        .request(Method::POST, &format!("/v1/containers/{id}/files"))
        .json(&json!({"file_id": "file-00000000000000000000000000000000"}))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 400);
    // Listed a page at a time.
    let page: Value = app
        .request(Method::GET, &format!("/v1/containers/{id}/files?limit=1"))
        .read_json()
        .await;
    assert_eq!(page["data"].as_array().unwrap().len(), 1);
    assert_eq!(page["has_more"], false);
    let listed: Value = app
        .request(Method::GET, "/v1/containers?limit=1&order=asc")
        .read_json()
        .await;
    assert_eq!(listed["data"][0]["id"], id);
    let content = app
        .request(
            Method::GET,
            &format!(
                "/v1/containers/{id}/files/{}/content",
                file["id"].as_str().unwrap()
            ),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(content.bytes().await.unwrap().as_ref(), b"hello");
    // Another user sees none of it.
    let stranger = app.create_user_with_key("stranger").await;
    let as_stranger = |method: Method, path: &str| {
        app.http
            .request(method, app.url(path))
            .bearer_auth(&stranger)
    };
    for path in [
        format!("/v1/containers/{id}"),
        format!("/v1/containers/{id}/files"),
        format!(
            "/v1/containers/{id}/files/{}/content",
            file["id"].as_str().unwrap()
        ),
    ] {
        let seen = as_stranger(Method::GET, &path).send().await.unwrap();
        assert_eq!(seen.status(), 404, "{path}");
    }
    let listed: Value = as_stranger(Method::GET, "/v1/containers").read_json().await;
    assert_eq!(listed["data"], json!([]));
    let malformed = app
        .request(Method::GET, "/v1/containers/not-an-id")
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status(), 404);
    let removed: Value = app
        .request(
            Method::DELETE,
            &format!("/v1/containers/{id}/files/{}", file["id"].as_str().unwrap()),
        )
        .read_json()
        .await;
    assert_eq!(removed["deleted"], true);
    let files: Value = app
        .request(Method::GET, &format!("/v1/containers/{id}/files"))
        .read_json()
        .await;
    assert_eq!(files["data"], json!([]));
}

#[actix_web::test]
async fn without_bubblewrap_the_tool_is_not_offered_and_the_listing_says_why() {
    let app = spawn_app_with(|config| {
        config.code_interpreter.bwrap_path = PathBuf::from("/nonexistent/bwrap");
    })
    .await;
    let refused = app
        .openai()
        .create_response()
        .json(&json!({"model": "fake-model", "input": "hi",
            "tools": [{"type": "code_interpreter", "container": {"type": "auto"}}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bubblewrap"),
        "{body}"
    );
    let agent: Value = app
        .api()
        .create_agent()
        .json(&json!({"name": "Coder", "system_prompt": "Code.", "enabled_tools": ["calculator"]}))
        .read_json()
        .await;
    let tools: Value = app
        .api()
        .agent_tools(agent["id"].as_str().unwrap())
        .read_json()
        .await;
    let reason = tools["unavailable"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "code_interpreter")
        .expect("the listing names the code interpreter")["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("bubblewrap"), "{reason}");
    // A chat that asks for it in x_tools is not offered it.
    let chat = app.new_chat().await;
    app.upstream.script([Reply::text("No code here.")]);
    app.send(
        &chat,
        json!({"content": "run", "web_search_options": {"x_tools": ["code_interpreter"]}}),
    )
    .await;
    let offered: Vec<String> = app.upstream.received()[0].body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    assert!(
        !offered.contains(&"code_interpreter".to_string()),
        "{offered:?}"
    );
}

#[actix_web::test]
async fn a_deep_think_sub_task_may_run_code_when_the_request_enables_it() {
    let web = crate::deep_think::start_web().await;
    let site = web.trim_start_matches("http://").to_string();
    let app = spawn_app_with(move |config| {
        config.tools.web_search_url = Some(web);
        config.tools.ssrf_allow_list = vec![site];
    })
    .await;
    let plan = json!({"title": "Numbers", "subtasks": [
        {"id": "1", "query": "compute the mean", "tools": ["code_interpreter"]},
        {"id": "2", "query": "find the context", "tools": ["web_search"]},
        {"id": "3", "query": "check the sum", "tools": ["calculator"]},
    ]});
    app.upstream.script([
        Reply::text(&plan.to_string()),
        Reply::text("# Numbers\n\nThe mean is 4.5."),
    ]);
    app.upstream.script_for(
        "Your part: compute the mean",
        [
            Reply::tool_call(
                "dt_code",
                "code_interpreter",
                json!({"code": "print(sum([3, 6]) / 2)"}),
            ),
            Reply::text("- The mean is 4.5."),
        ],
    );
    app.upstream.script_for(
        "Your part: find the context",
        [Reply::text("- No context.")],
    );
    app.upstream
        .script_for("Your part: check the sum", [Reply::text("- 3 + 6 = 9.")]);
    let chat = app.new_chat().await;
    app.send(
        &chat,
        json!({"content": "What is the mean of 3 and 6?", "enableTools": true,
               "web_search_options": {"x_deep_think": true,
                                      "x_tools": ["web_search", "code_interpreter"]}}),
    )
    .await;
    let result = tool_result(&app, "dt_code");
    assert_eq!(result["logs"], "4.5\n", "{result}");
    // The planner may assign it, and the sub-task it was assigned to is offered it.
    let offered = |body: &Value| -> Vec<String> {
        body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
            .collect()
    };
    let planner = app.upstream.received()[0].body.clone();
    assert!(
        planner.to_string().contains("code_interpreter"),
        "the planner may assign it: {planner}"
    );
    let sub_task = app
        .upstream
        .received()
        .into_iter()
        .find(|r| r.body.to_string().contains("Your part: compute the mean"))
        .unwrap();
    assert!(offered(&sub_task.body).contains(&"code_interpreter".to_string()));
}

#[actix_web::test]
async fn an_idle_container_loses_its_state_and_keeps_its_files() {
    let app = app_with(30, 64).await;
    let made: Value = app
        .request(Method::POST, "/v1/containers")
        .json(&json!({"name": "idle"}))
        .read_json()
        .await;
    let id = made["id"].as_str().unwrap();
    let (first, _) = run_code(
        &app,
        id,
        "idle_1",
        "x = 1\nopen('/mnt/data/kept.txt', 'w').write('still here')\nprint('set')",
    )
    .await;
    assert_eq!(first["logs"], "set\n", "{first}");
    let containers = &app.state.launcher.containers;
    let key = entities::ids::ContainerId::from_string(id);
    assert!(containers.is_running(&key));
    // A sandbox used a moment ago is left alone; one past the idle time is stopped.
    containers.stop_idle(Duration::from_secs(3600)).await;
    assert!(containers.is_running(&key));
    containers.stop_idle(Duration::ZERO).await;
    assert!(!containers.is_running(&key));
    let (after, _) = run_code(
        &app,
        id,
        "idle_2",
        "print('x' in globals(), open('/mnt/data/kept.txt').read())",
    )
    .await;
    assert_eq!(after["logs"], "False still here\n", "{after}");
}

#[actix_web::test]
async fn files_larger_than_a_part_are_placed_and_put_back_whole() {
    let app = app_with(30, 64).await;
    let made: Value = app
        .request(Method::POST, "/v1/containers")
        .json(&json!({"name": "parts"}))
        .read_json()
        .await;
    let id = made["id"].as_str().unwrap();
    // Written by the code: two and a half parts and three bytes, and an empty file.
    let digest = "import hashlib, os\n\
        for name in ['big.bin', 'up.bin', 'empty.txt']:\n\
        \x20   path = '/mnt/data/' + name\n\
        \x20   if os.path.exists(path):\n\
        \x20       data = open(path, 'rb').read()\n\
        \x20       print(name, len(data), hashlib.sha256(data).hexdigest()[:16])";
    let (written, _) = run_code(
        &app,
        id,
        "parts_1",
        &format!(
            "open('/mnt/data/big.bin', 'wb').write(bytes(range(256)) * (10 * 1024) + b'end')\n\
             open('/mnt/data/empty.txt', 'wb').close()\n{digest}"
        ),
    )
    .await;
    let before = written["logs"].as_str().unwrap().to_string();
    assert!(before.contains("big.bin 2621443 "), "{written}");
    assert!(before.contains("empty.txt 0 "), "{written}");

    // Given by the user while the sandbox runs: a part and a half, placed at once.
    let uploaded: Vec<u8> = (0..1_572_864u32).map(|i| (i % 251) as u8).collect();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(uploaded.clone()).file_name("up.bin"),
    );
    let file: Value = app
        .request(Method::POST, &format!("/v1/containers/{id}/files"))
        .multipart(form)
        .read_json()
        .await;
    assert_eq!(file["bytes"], 1_572_864, "{file}");
    let (placed, _) = run_code(&app, id, "parts_2", digest).await;
    let placed = placed["logs"].as_str().unwrap().to_string();
    assert!(
        placed.starts_with(&before[..before.find("empty.txt").unwrap()]),
        "{placed}"
    );
    let up_line = placed
        .lines()
        .find(|l| l.starts_with("up.bin "))
        .unwrap_or_else(|| panic!("{placed}"))
        .to_string();
    assert!(up_line.starts_with("up.bin 1572864 "), "{placed}");

    // A new sandbox has every file back, byte for byte.
    let containers = &app.state.launcher.containers;
    let key = entities::ids::ContainerId::from_string(id);
    containers.stop_idle(Duration::ZERO).await;
    assert!(!containers.is_running(&key));
    let (after, _) = run_code(&app, id, "parts_3", digest).await;
    assert_eq!(after["logs"].as_str().unwrap(), placed, "{after}");
}
