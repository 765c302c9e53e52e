package compact

import (
	"context"
	"slices"
	"unicode/utf8"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
)

// A view is what a request will carry while the strategies of a chain
// work on it: the transcript's messages, or some of them, with the latest
// summary (if any) first as a providers.SummaryMessage whose Through is 0.
// finish turns a view into the request.

// viewer is a strategy of this package: it works on views, so that in a
// chain the next strategy still knows the summary for what it is.
type viewer interface {
	view(ctx context.Context, in loop.CompactInput) (loop.CompactOutput, error)
	// windowOf is the tokens a request's messages may hold (0: unknown).
	windowOf(in loop.CompactInput) int
}

// The bounds of a summary when Summarize does not set them.
const (
	defaultSummaryShare = 0.2
	defaultSummaryBytes = 32 << 10
)

// summaryBytes is the longest a summary may be, in bytes, in a window of
// budget tokens: share of the window (as it is sent: SummaryLead and its
// framing included), and at most maxBytes.
func summaryBytes(budget int, share float64, maxBytes int) int {
	if share <= 0 {
		share = defaultSummaryShare
	}
	share = min(share, 0.5)
	if maxBytes <= 0 {
		maxBytes = defaultSummaryBytes
	}
	return max(min((int(float64(budget)*share)-4)*4-len(SummaryLead), maxBytes), 0)
}

// cut bounds a summary to limit bytes, ending a cut one with
// SummaryCutText.
func cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	if keep := limit - len(SummaryCutText); keep > 0 {
		return prefix(s, keep) + SummaryCutText
	}
	return prefix(s, limit)
}

// prefix is s cut to at most n bytes on a character boundary.
func prefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// latest finds a transcript's newest summary, wherever it is: its index
// (-1 if there is none), and the summary with Through no further than its
// own place (a summary cannot stand for what came after it). The search
// reads back from the end until it finds one: a type check per message.
func latest(transcript []providers.Message) (int, providers.SummaryMessage) {
	for i := len(transcript) - 1; i >= 0; i-- {
		if s, ok := transcript[i].(providers.SummaryMessage); ok {
			s.Through = min(max(s.Through, 0), i)
			return i, s
		}
	}
	return -1, providers.SummaryMessage{}
}

// tail is what a request carries of a transcript: the latest summary (cut
// to its bound) and the newest messages after what it stands for
// (summaries left out), as far back as the budget goes, cut so that it
// starts with no result whose call was left out. Its cost is that of what
// it returns, and of finding the latest summary.
type tail struct {
	msgs    []providers.Message // oldest first
	first   int                 // the transcript index of msgs[0]
	from    int                 // the first index the summary does not stand for
	summary *providers.SummaryMessage
	used    int  // the estimated tokens of msgs
	whole   bool // nothing after the summary (or the start) was left out
}

// newestWithin keeps the newest messages within budget tokens, or, to keep
// the newest keep turns (user and assistant messages), within hard. The
// newest message is kept whatever its size (with its call, if it is a
// result): a request without it would answer nothing. The summary's
// tokens come out of both budgets.
func newestWithin(transcript []providers.Message, budget, hard, keep, summaryLimit int) tail {
	var t tail
	if at, s := latest(transcript); at >= 0 {
		s.Summary = cut(s.Summary, summaryLimit)
		t.summary, t.from = &s, s.Through
		budget -= Tokens(s)
		hard -= Tokens(s)
	}
	turns := 0
	i := len(transcript) - 1
	for ; i >= t.from; i-- {
		m := transcript[i]
		if _, ok := m.(providers.SummaryMessage); ok {
			continue
		}
		cost := Tokens(m)
		if turns > 0 && (t.used+cost > budget && turns >= keep || t.used+cost > hard) {
			break
		}
		t.msgs = append(t.msgs, m)
		t.used += cost
		if m.Role() == providers.RoleUser || m.Role() == providers.RoleAssistant {
			turns++
		}
	}
	t.whole = i < t.from
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

// leftOut is the message LeftOutText is sent as.
var leftOutTokens = Tokens(providers.NewUserText(LeftOutText))

// finish turns a view into the request: a summary first is sent as a user
// message (SummaryLead, then the summary), other summaries are left out
// (no wire sends them), results that answer no call before them go, and a
// request that would start with anything but a user message starts with
// LeftOutText.
func finish(view []providers.Message) []providers.Message {
	out := make([]providers.Message, 0, len(view)+1)
	for i, m := range view {
		s, ok := m.(providers.SummaryMessage)
		switch {
		case ok && i == 0:
			out = append(out, providers.UserMessage{Content: []providers.Content{providers.Text{Text: SummaryLead + s.Summary}}, Timestamp: s.Timestamp})
		case ok:
		case len(out) == 0 && m.Role() == providers.RoleToolResult:
		default:
			out = append(out, m)
		}
	}
	if len(out) > 0 {
		if _, ok := out[0].(providers.UserMessage); ok {
			return out
		}
	}
	return slices.Insert(out, 0, providers.Message(providers.NewUserText(LeftOutText)))
}

// fit finishes what a strategy (or a chain) made of the transcript and,
// if it still does not fit w tokens (w > 0), trims it, saying so in the
// event. If the newest turns alone pass w, and keep > 0 (ShortenResults
// is at work), their results are shortened too, oldest first, until the
// request fits.
func fit(in loop.CompactInput, out loop.CompactOutput, w, keep int) loop.CompactOutput {
	view := out.Send
	if view == nil {
		view = in.Transcript
	}
	send := finish(view)
	if w > 0 && over(send, w) {
		in.Transcript = view
		t := Trim{Window: w}.trim(in, "", summaryBytes(w, 0, 0))
		send = finish(t.Send)
		if out.Event == nil {
			out.Event = t.Event
		} else if t.Event != nil {
			out.Event.Strategy += "+trim"
			out.Event.After, out.Event.Dropped = t.Event.After, out.Event.Dropped+t.Event.Dropped
		}
	}
	if w > 0 && keep > 0 && over(send, w) {
		n := sum(send)
		before, shortened := n, 0
		for i, m := range send {
			r, ok := m.(providers.ToolResultMessage)
			if !ok || len(r.Text()) <= 2*keep+64 {
				continue
			}
			send[i] = shorten(r, keep)
			shortened++
			if n += Tokens(send[i]) - Tokens(r); n <= w {
				break
			}
		}
		if out.Event == nil {
			out.Event = &events.Compacted{Strategy: "shorten-results", Before: before}
		}
		out.Event.Shortened += shortened
		out.Event.After = n
	}
	out.Send = send
	return out
}

// over reports whether msgs together pass w tokens, reading no further
// than it takes to know.
func over(msgs []providers.Message, w int) bool {
	n := 0
	for i := len(msgs) - 1; i >= 0 && n <= w; i-- {
		n += Tokens(msgs[i])
	}
	return n > w
}

// sum is the Tokens of msgs together.
func sum(msgs []providers.Message) int {
	n := 0
	for _, m := range msgs {
		n += Tokens(m)
	}
	return n
}

// or is v, or def when v is not a share (0 < v <= 1).
func or(v, def float64) float64 {
	if v <= 0 || v > 1 {
		return def
	}
	return v
}
