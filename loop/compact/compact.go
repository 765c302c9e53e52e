// Package compact keeps a long conversation within its model's context
// window: ready-made loop.Compactor strategies that change only what a
// request carries, never the stored transcript (a summary is added to it,
// nothing is taken away).
//
//	cfg.Compactor = compact.Chain(compact.Summarize{}, compact.ShortenResults{OlderThan: 4})
//
// The window is Model.ContextWindow less the output reserve, the system
// prompt and the tools. A run's token and cost budgets are the loop's
// (loop.Limits.MaxRunTokens, MaxRunCost). go run ./examples/chat -window
// 600 shows compaction on the scripted model.
//
//   - Trim leaves out the oldest turns, keeping the newest (and, if asked,
//     the first user message).
//   - Summarize, when the conversation passes 80% of the window, asks the model
//     for a summary of its older part (a request of its own, which fits
//     the window too) and sends the summary in its place; the summary is
//     stored in the transcript as a providers.SummaryMessage, so it
//     survives sessions, every later request sends it however long the
//     conversation grows, and the next summary is made from it and what
//     came after. A summary is bounded (a fifth of the window, 32 KiB); a
//     longer one is cut. If the summary fails, it trims instead and says
//     so.
//   - ShortenResults cuts old or large tool results down to their head and
//     tail, with a marker saying how much of which call's result was cut,
//     and trims what still does not fit.
//
// Chain combines them; Summarize runs first wherever it stands, so either
// order sends the same. Every request a strategy makes fits its window
// (unless its newest message alone does not) and is one every wire
// accepts: it starts with a user message (the summary, or LeftOutText
// when older messages were left out), and never holds a call without its
// result or a result without its call. What a strategy did is an
// events.Compacted. The tests hold every strategy, and both
// orders of the chain, to this over a thousand turns in a small window,
// and the requests to each wire's rules.
//
// Sizes are estimated, not counted: the last response's reported input
// tokens plus a quarter of the characters added since (no tokenizer is
// downloaded); preparing a request costs time in proportion to what it
// carries, plus a type check per message since the latest summary to find
// it.
package compact

import (
	"encoding/json"

	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
)

// imageTokens is what an image is taken to cost.
const imageTokens = 1200

// Tokens estimates the tokens of a message: a quarter of its characters
// (text, arguments, results), an image as imageTokens, and a few for its
// framing. A summary counts as the user message it is sent as.
func Tokens(m providers.Message) int {
	n := 0
	var content []providers.Content
	switch m := m.(type) {
	case providers.UserMessage:
		content = m.Content
	case providers.AssistantMessage:
		content = m.Content
	case providers.ToolResultMessage:
		content = m.Content
		n += len(m.ToolCallID) + len(m.ToolName)
	case providers.SummaryMessage:
		n += len(SummaryLead) + len(m.Summary) // as it is sent
	}
	images := 0
	for _, c := range content {
		switch c := c.(type) {
		case providers.Text:
			n += len(c.Text)
		case providers.Thinking:
			n += len(c.Thinking)
		case providers.ToolCall:
			n += len(c.ID) + len(c.Name) + len(c.RawArguments)
			if c.RawArguments == "" {
				if b, err := json.Marshal(c.Arguments); err == nil {
					n += len(b)
				}
			}
		case providers.Image:
			images++
		}
	}
	return n/4 + images*imageTokens + 4
}

// Estimate estimates the tokens of a request carrying msgs: the input and
// output tokens the last response in msgs reported, plus Tokens of each
// message after it (all of them when none reported usage).
func Estimate(msgs []providers.Message) int {
	n := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if a, ok := msgs[i].(providers.AssistantMessage); ok {
			if u := a.Usage; u.Input+u.CacheRead+u.CacheWrite > 0 {
				return n + u.Input + u.CacheRead + u.CacheWrite + u.Output
			}
		}
		n += Tokens(msgs[i])
	}
	return n
}

// estimateUpTo is Estimate, giving up once the estimate passes limit (it
// then returns a number over limit): its cost is that of what fits.
func estimateUpTo(msgs []providers.Message, limit int) int {
	n := 0
	for i := len(msgs) - 1; i >= 0 && n <= limit; i-- {
		if a, ok := msgs[i].(providers.AssistantMessage); ok {
			if u := a.Usage; u.Input+u.CacheRead+u.CacheWrite > 0 {
				return n + u.Input + u.CacheRead + u.CacheWrite + u.Output
			}
		}
		n += Tokens(msgs[i])
	}
	return n
}

// window is the tokens a request's messages may hold: the model's context
// window less the output reserved (the request's max tokens, the model's,
// or a quarter of the window), the system prompt and the tools. It is 0
// only when the window is unknown: a system prompt and tools that fill
// the window leave it 1, so that requests carry the newest turn alone,
// not the whole transcript.
func window(in loop.CompactInput, override int) int {
	if override > 0 {
		return override
	}
	w := in.Model.ContextWindow
	if w <= 0 {
		return 0 // unknown: nothing to keep within
	}
	reserve := in.Options.MaxTokens
	if reserve <= 0 {
		reserve = in.Model.MaxTokens
	}
	if reserve <= 0 || reserve > w/2 {
		reserve = w / 4
	}
	fixed := len(in.SystemPrompt) / 4
	for _, t := range in.Tools {
		fixed += (len(t.Name) + len(t.Description) + len(t.Parameters)) / 4
	}
	return max(w-reserve-fixed, 1)
}
