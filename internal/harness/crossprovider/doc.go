// Package crossprovider holds the tests of conversations that move from
// one provider to another (Chat Completions, Responses, Anthropic
// Messages, Gemini): every pair, each against a server speaking its wire
// format; and of hostile servers, played the same way to every wire. It
// has no code of its own.
package crossprovider
