// Package crossprovider holds the tests of conversations that move from
// one provider to another (Chat Completions, Responses, Anthropic
// Messages, Gemini): every pair, each against a server speaking its wire
// format. It has no code of its own.
package crossprovider
