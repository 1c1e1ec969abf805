#!/usr/bin/env bash
# The specification's curl Chat Completions and documents API examples, as written
# (docs/spec.md#examples): only the base URL, key, model, chat id, session token and document id are
# substituted. Every request must succeed (curl fails on an HTTP error status).
set -euo pipefail
curl() { command curl -sS --fail-with-body "$@"; echo; }
BASE="$COLLOQUY_URL"
KEY="$COLLOQUY_KEY"

echo "== research tools"
curl -X POST "$BASE/v1/chat/completions" \
-H "Authorization: Bearer $KEY" \
-H "Content-Type: application/json" \
-d '{
"model": "fake-model",
"messages": [
{"role": "user", "content": "What are the key differences between Rust and Go for building web servers?"}
],
"stream": true,
"web_search_options": {
"search_context_size": "medium",
"x_tools": ["web_search", "fetch_url", "code_search"]
}
}'

echo "== all tools"
curl -X POST "$BASE/v1/chat/completions" \
-H "Authorization: Bearer $KEY" \
-H "Content-Type: application/json" \
-d '{
"model": "fake-model",
"messages": [
{"role": "user", "content": "Compare the async runtimes in Rust and explain the tradeoffs"}
],
"stream": true,
"web_search_options": {
"search_context_size": "high",
"max_iterations": 8,
"x_tools": [
"web_search", "fetch_url", "code_search",
"gitlab_code_search", "calculator"
]
}
}'

echo "== multi-tool"
curl -X POST "$BASE/v1/chat/completions" \
-H "Authorization: Bearer $KEY" \
-H "Content-Type: application/json" \
-d '{
"model": "fake-model",
"messages": [
{
"role": "user",
"content": "What is the current price of gold per ounce, and how much would 3.5 troy ounces cost in EUR at today'\''s exchange rate?"
}
],
"stream": true,
"web_search_options": {
"search_context_size": "medium",
"max_iterations": 6,
"x_tools": ["web_search", "fetch_url", "calculator"]
}
}'

echo "== deep think"
curl -X POST "$BASE/v1/chat/completions" \
-H "Authorization: Bearer $KEY" \
-H "Content-Type: application/json" \
-d '{
"model": "fake-model",
"messages": [
{"role": "user", "content": "Comprehensive analysis of quantum computing advances in 2026"}
],
"stream": true,
"web_search_options": {
"search_context_size": "medium",
"x_deep_think": true,
"x_tools": ["web_search", "fetch_url", "code_search", "calculator"]
}
}'

echo "== artifact"
curl -X POST "$BASE/v1/chat/completions" \
-H "Authorization: Bearer $KEY" \
-H "Content-Type: application/json" \
-d '{
"model": "fake-model",
"messages": [
{
"role": "user",
"content": "Create a Python script that implements a binary search tree with insert, search, and in-order traversal methods."
}
],
"stream": true
}'

echo "== list documents"
curl "$BASE/chat/api/$CHAT_ID/documents" \
-H "Cookie: session=$SESSION"

echo "== delete document"
curl -X DELETE "$BASE/chat/api/$CHAT_ID/documents/$DOCUMENT_ID" \
-H "Cookie: session=$SESSION"
