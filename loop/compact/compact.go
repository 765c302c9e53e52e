// Package compact keeps a long conversation within its model's context
// window: ready-made loop.Compactor strategies that change only what a
// request carries, never the stored transcript (a summary is added to it,
// nothing is taken away).
//
//   - Trim leaves out the oldest turns, keeping the newest (and, if asked,
//     the first user message).
//   - Summarize, when the conversation nears the window, asks the model
//     for a summary of its older part (a request of its own) and sends the
//     summary in its place; the summary is stored in the transcript as a
//     providers.SummaryMessage, so it survives sessions and what it stands
//     for is never summarised again. If the summary fails, it trims instead
//     and says so.
//   - ShortenResults cuts old or large tool results down to their head and
//     tail, with a marker saying how much of which call's result was cut.
//
// Chain combines them (ShortenResults first). Every strategy keeps a tool
// call and its result together, always: a request never holds a call
// without its result or a result without its call. What a strategy did is
// an events.Compacted.
//
//	cfg.Compactor = compact.Chain(compact.ShortenResults{OlderThan: 4, MaxBytes: 8 << 10}, compact.Summarize{})
//
// Sizes are estimated, not counted: the last response's reported input
// tokens plus a quarter of the characters added since (no tokenizer is
// downloaded); preparing a request costs time in proportion to what it
// carries, not to the transcript's length.
package compact

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
)

// imageTokens is what an image is taken to cost.
const imageTokens = 1200

// Tokens estimates the tokens of a message: a quarter of its characters
// (text, arguments, results), an image as imageTokens, and a few for its
// framing.
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
		n += len(m.Summary)
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
// or a quarter of the window), the system prompt and the tools.
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
	return max(w-reserve-fixed, 0)
}

// summaryText is the user message a summary is sent as.
func summaryText(s providers.SummaryMessage) providers.Message {
	return providers.UserMessage{Content: []providers.Content{providers.Text{Text: "Summary of the earlier conversation:\n" + s.Summary}}, Timestamp: s.Timestamp}
}

// tail is the newest part of a transcript a request may carry: the
// messages after the latest summary's Through (summaries left out), newest
// first, as far back as budget tokens go, cut so that it starts with no
// result whose call was left out. keep is how many of the newest turns it
// keeps whatever their size. It reads only as far back as it keeps (and
// to the latest summary): its cost is that of what it returns.
type tail struct {
	msgs    []providers.Message // oldest first
	first   int                 // the transcript index of msgs[0]
	summary *providers.SummaryMessage
	used    int  // their estimated tokens
	whole   bool // nothing after the summary (or the start) was left out
}

func newestWithin(transcript []providers.Message, budget, keep int) tail {
	var t tail
	from := 0 // messages before it are summarised
	turns := 0
	i := len(transcript) - 1
	for ; i >= from; i-- {
		m := transcript[i]
		if s, ok := m.(providers.SummaryMessage); ok {
			if t.summary == nil {
				t.summary, from = &s, min(s.Through, len(transcript))
				budget -= Tokens(s)
			}
			continue
		}
		cost := Tokens(m)
		if t.used+cost > budget && turns >= keep {
			break
		}
		t.msgs = append(t.msgs, m)
		t.used += cost
		if m.Role() == providers.RoleUser || m.Role() == providers.RoleAssistant {
			turns++
		}
	}
	t.whole = i < from
	slices.Reverse(t.msgs)
	t.first = i + 1
	// A result whose call was left out goes too.
	for len(t.msgs) > 0 && t.msgs[0].Role() == providers.RoleToolResult {
		t.used -= Tokens(t.msgs[0])
		t.msgs = t.msgs[1:]
		t.first++
	}
	return t
}

// requestOf builds what a request carries from a tail: the summary (as a
// user message) and, if asked, the first user message, then the tail.
func requestOf(transcript []providers.Message, t tail, keepFirst bool) []providers.Message {
	out := make([]providers.Message, 0, len(t.msgs)+2)
	if t.summary != nil {
		out = append(out, summaryText(*t.summary))
	}
	if keepFirst && !t.whole && t.summary == nil {
		for _, m := range transcript[:min(t.first, len(transcript))] {
			if m.Role() == providers.RoleUser {
				out = append(out, m)
				break
			}
		}
	}
	return append(out, t.msgs...)
}

// Trim leaves the oldest turns out of requests that would not fit the
// window, keeping the newest KeepTurns turns whatever their size.
type Trim struct {
	// Window is the tokens a request's messages may hold; 0 means the
	// model's context window less its output reserve, system prompt and
	// tools.
	Window int
	// KeepFirst keeps the conversation's first user message (the task, as
	// often as not) in every request.
	KeepFirst bool
	// KeepTurns is how many of the newest user and assistant messages are
	// always sent; 0 means 4.
	KeepTurns int
}

// Compact implements loop.Compactor.
func (s Trim) Compact(_ context.Context, in loop.CompactInput) (loop.CompactOutput, error) {
	return s.trim(in, ""), nil
}

func (s Trim) trim(in loop.CompactInput, note string) loop.CompactOutput {
	budget := window(in, s.Window)
	if budget == 0 {
		return loop.CompactOutput{}
	}
	keep := s.KeepTurns
	if keep <= 0 {
		keep = 4
	}
	t := newestWithin(in.Transcript, budget, keep)
	send := requestOf(in.Transcript, t, s.KeepFirst)
	if t.whole && note == "" {
		return loop.CompactOutput{Send: send} // it all fits
	}
	dropped := t.first
	if t.summary != nil {
		dropped = t.first - min(t.summary.Through, t.first)
	}
	return loop.CompactOutput{Send: send, Event: &events.Compacted{Strategy: "trim", Before: estimateUpTo(in.Transcript, 2*budget),
		After: sum(send), Dropped: dropped, Note: note}}
}

// sum is the Tokens of msgs together.
func sum(msgs []providers.Message) int {
	n := 0
	for _, m := range msgs {
		n += Tokens(m)
	}
	return n
}
