// Package providers is agentloop's provider-neutral LLM layer: the messages of
// a transcript and their content blocks, token usage and its cost, models,
// and the [Provider] interface through which a model streams one assistant
// message as a sequence of [StreamEvent] values.
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
package providers
