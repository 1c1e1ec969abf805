//! Integration tests: the real server on a random port, a real SQLite file in a temporary
//! directory, and a fake upstream model speaking OpenAI's wire protocol over real HTTP.

mod agents;
mod artifacts_memory;
mod ask_user;
mod auth;
mod browser;
mod chat_engine;
mod chats;
mod code_search;
mod completions;
mod cross_site;
mod deep_think;
mod documents;
mod errors;
mod fake_upstream;
mod fetch_url;
mod hardening;
mod health;
mod helpers;
mod lifecycle;
mod llm_client;
mod logs;
mod mcp;
mod message_limit;
mod metrics;
mod openai_node;
mod openai_python;
mod real_server;
mod research;
mod responses_sdk;
mod seed_examples;
mod sign_in;
mod sse;
mod test_tools;
mod tool_schemas;
mod tus_races;
