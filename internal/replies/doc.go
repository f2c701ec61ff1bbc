// Package replies is get-thread-replies, the one implementation behind the
// agent tool get_thread_replies, GET /api/v1/threads/{id}/replies and the
// MCP tool get-thread-replies (origin design: get-thread-replies.md, written
// for Slack's conversations.replies).
//
// A thread is named by a weft thread id (a UUID) or a Discord thread id (a
// snowflake). A weft thread, or a Discord thread weft tracks, is read from
// Postgres; any other Discord thread from Discord's REST history. A Slack
// thread is named and answered exactly as the origin design says (GetSlack:
// {channelId, threadTs, limit, cursor, order} → {parent, replies,
// nextCursor, hasMore}, messages {ts, user, text, edited, deleted,
// subtype}), read through conversations.replies.
//
// What counts as a reply. The parent is the thread's first input: its
// initial prompt (or, on Discord, the thread's starter message). The
// replies are the messages of the conversation as people on its surface saw
// them, each once: what people wrote (each platform's message stitches) and
// what weft said back (the answer of an llm_call that asked for no tools,
// agent_thought, clarification_request, error, and a thread_result from the
// complete_thread tool). Steps behind the answers are not replies: system
// prompts, tool calls, LLM calls that only asked for tools (their text is
// an agent_thought already) and the thread_result a turn writes beside its
// final llm_call (the same text again). The stitch type is each message's
// subtype.
//
// Edits and deletes: an edited message carries edited and its latest text;
// a deleted one stays in its place with deleted set and text null, so a
// client paging through sees where it was. Discord's REST API no longer
// returns deleted messages, so only stored threads report deletes.
//
// Pages: limit (default 50, at most 200: Slack's recommended ceiling for
// conversations.replies, which the origin follows) and an opaque cursor
// bound to the thread and order; order oldest (default) or newest. The
// parent comes with every page.
//
// Failures are *httpapi.Error values with the origin's codes (NotFound,
// AuthenticationError, AuthorizationError, RateLimit, plus InvalidArgument
// and Unavailable), the vocabulary of the whole API. Transient failures are retried: three attempts in all,
// with exponential backoff from one second; authentication and
// authorization failures never are, and a rate limit is returned at once.
// Every call is counted in Prometheus metrics on the registry passed in.
package replies
