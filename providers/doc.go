// Package providers is agentloop's provider-neutral LLM layer: the messages of
// a transcript and their content blocks, token usage and its cost, models,
// and the [Provider] interface through which a model streams one assistant
// message as a sequence of [StreamEvent] values.
//
//	for _, m := range msgs { // a transcript: what loop.Run returns, say
//		if am, ok := m.(providers.AssistantMessage); ok {
//			fmt.Println(providers.TextOf(am.Content), am.Usage.Cost.Total)
//		}
//	}
//
// Every message and block encodes to JSON with the reference
// implementation's field names (role, content, toolCallId, stopReason, ...),
// so transcripts can be stored, shipped and exchanged with it.
//
// Messages are values. Once a message has been handed to the loop or
// published in an event it is never modified again; code that receives one
// must treat its slices and maps as read-only.
//
// A Model comes from the provider that serves it (openai.New(...).Model("gpt-4o")),
// so its API and provider names agree with that provider. Writing a
// provider of your own? Package providers/kit holds what it needs.
//
// Opaque data (signatures, encrypted reasoning, item ids) rides on its
// content block (Thinking.Signature, Text.Signature, ToolCall.Signature)
// through events, the wire form, NATS and sessions, and goes back only to
// the model that produced it. A conversation may move between providers:
// each prepares the transcript for its own model (kit.Target), so another
// model's thinking becomes plain text (redacted thinking, having none, is
// left out), its signatures are dropped, call ids the target refuses
// (Anthropic: ^[a-zA-Z0-9_-]{1,64}$) are replaced the same way in call and
// result, and calls without results get stand-ins. On every wire a
// response cut at the token limit reaches the loop as stop reason length,
// and a stream that ends without its terminal event is an error, never a
// clean stop.
package providers
