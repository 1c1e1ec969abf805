use super::*;
use crate::chat::tree::MessageNode;
use crate::llm::wire::{FunctionCall, ToolCall};
use entities::messages::MessageRole;

fn words(n: usize) -> String {
    (0..n).map(|i| format!("word{i} ")).collect()
}

fn roles(request: &ChatRequest) -> Vec<&'static str> {
    request
        .messages
        .iter()
        .map(|m| match m.role {
            Role::System | Role::Developer => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        })
        .collect()
}

#[test]
fn a_request_that_fits_is_left_alone() {
    let mut request = ChatRequest::new(
        "m",
        vec![ChatMessage::system("Be brief."), ChatMessage::user("hi")],
    );
    let before = request.clone();
    assert_eq!(fit(&mut request, 1, 4_096, 0), Ok(None));
    assert_eq!(request, before);
}

/// A system prompt, ten turns of about 300 tokens each, and the latest question.
fn long_history() -> Vec<ChatMessage> {
    let mut messages = vec![ChatMessage::system("You are helpful.")];
    for turn in 0..10 {
        messages.push(ChatMessage::user(format!(
            "question {turn}: {}",
            words(150)
        )));
        messages.push(ChatMessage::assistant(format!(
            "answer {turn}: {}",
            words(150)
        )));
    }
    messages.push(ChatMessage::user("the latest question"));
    messages
}

#[test]
fn the_oldest_turns_go_first_and_the_system_prompt_and_latest_turn_stay() {
    let messages = long_history();
    let latest = messages.len() - 1;
    let mut request = ChatRequest::new("m", messages);
    let trimmed = fit(&mut request, latest, 4_096, 0)
        .unwrap()
        .expect("trimmed");
    assert!(trimmed.prompt_tokens <= prompt_budget(4_096, None));
    assert_eq!(trimmed.dropped_messages % 2, 0, "whole turns are dropped");
    assert!(trimmed.dropped_messages > 0);
    let kept = roles(&request);
    assert_eq!(kept[0], "system");
    assert_eq!(kept[1], "user", "history resumes at a user message");
    assert_eq!(
        request.messages.last().unwrap().content,
        Some(MessageContent::Text("the latest question".into()))
    );
    // The newest history is what remains.
    let Some(MessageContent::Text(last_answer)) = &request.messages[kept.len() - 2].content else {
        panic!("an answer")
    };
    assert!(last_answer.starts_with("answer 9:"));
}

#[test]
fn a_reserve_leaves_room_for_a_summary_and_the_dropped_messages_are_handed_back() {
    let messages = long_history();
    let latest = messages.len() - 1;
    let mut plain = ChatRequest::new("m", messages.clone());
    let without = fit(&mut plain, latest, 4_096, 0).unwrap().unwrap();
    let mut reserved = ChatRequest::new("m", messages.clone());
    let with = fit(&mut reserved, latest, 4_096, 600).unwrap().unwrap();
    assert!(with.dropped_messages > without.dropped_messages);
    assert!(with.prompt_tokens + 600 <= prompt_budget(4_096, None));
    assert_eq!(with.dropped.len(), with.dropped_messages);
    assert_eq!(with.dropped[..], messages[1..1 + with.dropped_messages]);
    assert_eq!(with.summarized_messages, 0);
    // A request that fits keeps everything, whatever the reserve.
    let mut small = ChatRequest::new("m", vec![ChatMessage::user("hi")]);
    assert_eq!(fit(&mut small, 0, 4_096, 3_000), Ok(None));
}

#[test]
fn this_runs_oldest_tool_results_are_shortened_when_history_is_not_enough() {
    let call = ToolCall {
        id: "c1".into(),
        kind: "function".into(),
        function: FunctionCall {
            name: "fetch_url".into(),
            arguments: "{}".into(),
        },
    };
    let messages = vec![
        ChatMessage::user("read these"),
        ChatMessage::assistant_with_tools(Some(String::new()), vec![call.clone()]),
        ChatMessage::tool_result("c1", words(2_000)),
        ChatMessage::assistant_with_tools(Some(String::new()), vec![call]),
        ChatMessage::tool_result("c1", words(200)),
    ];
    let mut request = ChatRequest::new("m", messages);
    let trimmed = fit(&mut request, 0, 4_096, 0).unwrap().expect("trimmed");
    assert_eq!(trimmed.shortened_results, 1);
    assert_eq!(
        request.messages[2].content,
        Some(MessageContent::Text(REMOVED_RESULT.into()))
    );
    assert_ne!(
        request.messages[4].content,
        Some(MessageContent::Text(REMOVED_RESULT.into())),
        "the newest result is kept"
    );
}

#[test]
fn a_latest_message_larger_than_the_context_is_refused_naming_both_sizes() {
    let mut request = ChatRequest::new(
        "m",
        vec![
            ChatMessage::user("old"),
            ChatMessage::assistant("older answer"),
            ChatMessage::user(words(6_000)),
        ],
    );
    let err = fit(&mut request, 2, 4_096, 0).unwrap_err();
    assert_eq!(err.context_length, 4_096);
    assert!(err.needed_tokens > 4_096);
    let message = err.message();
    assert!(
        message.contains(&err.needed_tokens.to_string()),
        "{message}"
    );
    assert!(message.contains("4096"), "{message}");
}

#[test]
fn a_latest_turn_that_fits_only_with_less_room_for_the_answer_gets_a_smaller_max_tokens() {
    // 4,096 tokens: the prompt may have 2,458 with the usual answer room, 3,226 at least.
    let mut request = ChatRequest::new(
        "m",
        vec![
            ChatMessage::system("Be brief."),
            ChatMessage::user(words(1_400)),
        ],
    );
    let trimmed = fit(&mut request, 1, 4_096, 0).unwrap().expect("fitted");
    let room = trimmed.answer_tokens.expect("less room than usual");
    assert_eq!(request.max_tokens, Some(room));
    assert!((256..1_024).contains(&room), "{room}");
    assert_eq!(
        u64::from(room) + trimmed.prompt_tokens + 614,
        4_096,
        "the answer gets what the prompt and the margin leave"
    );
    assert_eq!(trimmed.payload()["answer_tokens"], room);

    // A client's own max_tokens is never lowered: that request is refused instead.
    let mut strict = ChatRequest::new("m", vec![ChatMessage::user(words(1_400))]);
    strict.max_tokens = Some(1_000);
    assert!(fit(&mut strict, 0, 4_096, 0).is_err());
    assert_eq!(strict.max_tokens, Some(1_000));
}

#[test]
fn a_refusal_caused_by_tool_definitions_says_so() {
    let tool = |n: usize| {
        crate::llm::wire::ToolDefinition::function(
            &format!("tool_{n}"),
            &words(300),
            json!({"type": "object", "properties": {}}),
        )
    };
    let mut request = ChatRequest::new("m", vec![ChatMessage::user("hi")])
        .with_tools((0..8).map(tool).collect::<Vec<_>>());
    let err = fit(&mut request, 0, 2_048, 0).unwrap_err();
    assert_eq!(err.tools, 8);
    assert!(err.tool_tokens * 2 > err.needed_tokens);
    let message = err.message();
    assert!(message.contains("definitions of the 8 tools"), "{message}");
    assert!(message.contains("turn tools off"), "{message}");
}

#[test]
fn the_answer_reserve_follows_max_tokens() {
    assert_eq!(prompt_budget(4_096, None), 4_096 - 1_024 - 614);
    assert_eq!(prompt_budget(4_096, Some(100)), 4_096 - 100 - 614);
    assert_eq!(prompt_budget(1_000, None), 1_000 - 250 - 150);
    assert_eq!(prompt_budget(100, Some(500)), 0);
}

#[test]
fn an_image_costs_a_fixed_number_of_tokens_whatever_its_base64() {
    // A 4 MB data URL would be a million tokens if its text were counted.
    let mut with_image = ChatMessage::user("");
    with_image.content = Some(MessageContent::Parts(vec![
        serde_json::json!({"type": "text", "text": "what is this?"}),
        serde_json::json!({"type": "image_url",
            "image_url": {"url": format!("data:image/png;base64,{}", "A".repeat(4_000_000))}}),
    ]));
    let mut request = ChatRequest::new("m", vec![with_image]);
    assert_eq!(fit(&mut request, 0, 4_096, 0), Ok(None), "it fits");
    // In a small window the image's fixed cost does not fit.
    let too_small = fit(&mut request, 0, 1_024, 0).unwrap_err();
    assert!(too_small.needed_tokens > IMAGE_TOKENS);
    assert!(too_small.needed_tokens < IMAGE_TOKENS + 32);
}

/// Where the history is cut when everything is counted: the oldest user message from which the
/// rest fits `budget − reserve` (else the latest turn), and `None` when all fits `budget`. What
/// `fit` must decide while counting only from the newest message back.
fn cut_counting_everything(
    request: &ChatRequest,
    latest_turn: usize,
    context_length: u32,
    reserve: u64,
) -> Option<usize> {
    let chunker = Chunker::default();
    let sizes: Vec<u64> = request
        .messages
        .iter()
        .map(|m| message_tokens(&chunker, m))
        .collect();
    let budget = prompt_budget(context_length, request.max_tokens);
    let total: u64 = sizes.iter().sum();
    if total <= budget {
        return None;
    }
    let first = request
        .messages
        .iter()
        .take(latest_turn)
        .take_while(|m| m.role == Role::System)
        .count();
    let target = budget.saturating_sub(reserve);
    let mut cut = first;
    while total - sizes[first..cut].iter().sum::<u64>() > target && cut < latest_turn {
        cut += 1;
        while cut < latest_turn && request.messages[cut].role != Role::User {
            cut += 1;
        }
    }
    Some(cut - first)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    /// Counting from the newest message back drops exactly what counting everything would.
    #[test]
    fn counting_from_the_newest_back_cuts_where_counting_everything_does(
        system in proptest::bool::ANY,
        turns in proptest::collection::vec((1usize..80, 0usize..3, 1usize..80), 0..40),
        latest in 1usize..60,
        context_length in 300u32..6_000,
        reserve in 0u64..400,
    ) {
        let mut messages = Vec::new();
        if system {
            messages.push(ChatMessage::system(words(20)));
        }
        for (question, tools, answer) in turns {
            messages.push(ChatMessage::user(words(question)));
            for _ in 0..tools {
                messages.push(ChatMessage::tool_result("call", words(answer)));
            }
            messages.push(ChatMessage::assistant(words(answer)));
        }
        messages.push(ChatMessage::user(words(latest)));
        let latest_turn = messages.len() - 1;
        let mut request = ChatRequest::new("m", messages);
        let expected = cut_counting_everything(&request, latest_turn, context_length, reserve);
        let fitted = fit(&mut request, latest_turn, context_length, reserve);
        let dropped = match fitted {
            Ok(trimmed) => trimmed.map(|t| t.dropped_messages),
            // Refused: the latest turn alone is too large, whatever was dropped.
            Err(_) => expected,
        };
        proptest::prop_assert_eq!(dropped, expected);
    }
}

fn chain(messages: &[(MessageRole, String)]) -> (crate::chat::tree::BranchTree, MessageId) {
    let nodes: Vec<MessageNode> = messages
        .iter()
        .enumerate()
        .map(|(i, (role, text))| {
            let parent = i.checked_sub(1).map(|p| format!("m{p}"));
            MessageNode::plain(&format!("m{i}"), parent.as_deref(), *role, text, i as i64)
        })
        .collect();
    let leaf = nodes.last().expect("a message").id.clone();
    let tree = crate::chat::tree::BranchTree::from_nodes(nodes, Some(&leaf)).expect("a chain");
    (tree, leaf)
}

use entities::ids::MessageId;

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    /// A turn's context cut at the window by the stored messages' counts is fitted into
    /// exactly the request the whole path is: the same messages sent, and as many reported
    /// left out.
    #[test]
    fn history_cut_at_the_window_fits_as_the_whole_path_does(
        leading_system in proptest::bool::ANY,
        system_prompt in 0usize..200,
        turns in proptest::collection::vec((1usize..120, 0usize..4, 1usize..120), 0..60),
        latest in 1usize..60,
        context_length in 300u32..8_000,
    ) {
        let mut messages = Vec::new();
        if leading_system {
            messages.push((MessageRole::System, words(30)));
        }
        for (question, shape, answer) in turns {
            messages.push((MessageRole::User, words(question)));
            match shape {
                // A question asked twice (sent as one), a stored tool message (not sent).
                1 => messages.push((MessageRole::User, words(answer / 2 + 1))),
                2 => messages.push((MessageRole::Tool, words(answer))),
                _ => {}
            }
            messages.push((MessageRole::Assistant, words(answer)));
        }
        messages.push((MessageRole::User, words(latest)));
        let (tree, leaf) = chain(&messages);
        let system = (system_prompt > 0).then(|| words(system_prompt));
        let fitted = |path: Vec<&MessageNode>| {
            let path: Vec<MessageNode> = path.into_iter().cloned().collect();
            let messages = crate::agent::prompt::assemble(system.as_deref(), &path);
            let latest_turn = messages.iter().rposition(|m| m.role == Role::User).unwrap_or(0);
            let mut request = ChatRequest::new("m", messages);
            let outcome = fit(&mut request, latest_turn, context_length, 0)
                .map(|trimmed| trimmed.map_or(0, |t| t.dropped_messages));
            (request.messages, outcome)
        };
        let (whole, whole_dropped) = fitted(tree.path_to(&leaf).expect("the path"));
        let (path, left_out) = tree
            .context_path(&leaf, Some(u64::from(context_length)), MessageNode::history_tokens)
            .expect("the path");
        let roles: Vec<MessageRole> = left_out.iter().map(|node| node.role).collect();
        let kept: Vec<MessageNode> = path.iter().copied().cloned().collect();
        let left_out = crate::agent::prompt::left_out_messages(&kept, &roles);
        let (cut, cut_dropped) = fitted(path);
        match (whole_dropped, cut_dropped) {
            (Ok(whole_dropped), Ok(cut_dropped)) => {
                proptest::prop_assert_eq!(&cut, &whole);
                proptest::prop_assert_eq!(cut_dropped + left_out, whole_dropped);
            }
            (Err(_), Err(_)) => {}
            (whole, cut) => proptest::prop_assert!(false, "whole {whole:?}, cut {cut:?}"),
        }
    }
}
