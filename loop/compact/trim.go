package compact

import (
	"context"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
)

// Trim leaves the oldest turns out of requests that would not fit the
// window, keeping the newest. A stored summary (see Summarize) is always
// sent, in place of what it stands for. A request that would start with an
// assistant message starts with LeftOutText.
type Trim struct {
	// Window is the tokens a request's messages may hold; 0 means the
	// model's context window less its output reserve, system prompt and
	// tools.
	Window int
	// KeepFirst keeps the conversation's first user message (the task, as
	// often as not) in every request, while there is no summary and the
	// message takes at most half the window.
	KeepFirst bool
	// KeepTurns is how many of the newest user and assistant messages are
	// sent even past the window's share they would otherwise have (see
	// Summarize.Keep), never past the window itself; 0 means 4. The newest
	// message is always sent, with its call if it is a result: only a
	// message larger than the window on its own makes a request pass it.
	KeepTurns int
}

// Compact implements loop.Compactor.
func (s Trim) Compact(ctx context.Context, in loop.CompactInput) (loop.CompactOutput, error) {
	out, err := s.view(ctx, in)
	if out.Send != nil {
		out.Send = finish(out.Send)
	}
	return out, err
}

func (s Trim) view(_ context.Context, in loop.CompactInput) (loop.CompactOutput, error) {
	return s.trim(in, "", summaryBytes(window(in, s.Window), 0, 0)), nil
}

func (s Trim) windowOf(in loop.CompactInput) int { return window(in, s.Window) }

func (s Trim) keepTurns() int {
	if s.KeepTurns <= 0 {
		return 4
	}
	return s.KeepTurns
}

// trim makes the view of the newest messages within the window; note, when
// not empty, says why (and makes it an event even when all fits).
func (s Trim) trim(in loop.CompactInput, note string, summaryLimit int) loop.CompactOutput {
	budget := window(in, s.Window)
	if budget == 0 {
		return loop.CompactOutput{}
	}
	// Room for LeftOutText, and for the first user message if kept.
	budget -= leftOutTokens
	var first providers.Message
	firstAt := -1
	if s.KeepFirst {
		for i, m := range in.Transcript {
			if m.Role() == providers.RoleUser {
				if Tokens(m) <= budget/2 {
					first, firstAt = m, i
					budget -= Tokens(m)
				}
				break
			}
		}
	}
	t := newestWithin(in.Transcript, budget, budget, s.keepTurns(), summaryLimit)
	view := make([]providers.Message, 0, len(t.msgs)+2)
	if t.summary != nil {
		view = append(view, providers.SummaryMessage{Summary: t.summary.Summary, Timestamp: t.summary.Timestamp})
	} else if first != nil && firstAt < t.first {
		view = append(view, first)
	}
	view = append(view, t.msgs...)
	if t.whole && note == "" {
		return loop.CompactOutput{Send: view} // it all fits
	}
	return loop.CompactOutput{Send: view, Event: &events.Compacted{Strategy: "trim", Before: estimateUpTo(in.Transcript, 2*budget),
		After: sum(view), Dropped: t.first - t.from, Note: note}}
}

// countMessages counts msgs but their summaries.
func countMessages(msgs []providers.Message) int {
	n := 0
	for _, m := range msgs {
		if _, ok := m.(providers.SummaryMessage); !ok {
			n++
		}
	}
	return n
}
