package compact

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/internal/httpx"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
)

// Summarize replaces the older part of a conversation that nears its
// window with a summary the model writes, keeping the newest turns
// verbatim. The summary is stored in the transcript (a
// providers.SummaryMessage): every later request sends it, first, in place
// of what it stands for, however long the conversation grows, and a later
// summary is made from it and what came after, never from the original
// messages again. A summary has a bound (SummaryShare, MaxSummaryBytes):
// a longer one is cut, ending with SummaryCutText. The summary request
// fits the window with everything it sends: its own prompt, the summary
// so far and the messages since (the oldest of them left out, as
// SummaryLeftOut, when they do not all fit). A summary that fails falls
// back to Trim, and the event says so.
type Summarize struct {
	// Window is the tokens a request's messages may hold; 0 means the
	// model's context window less its output reserve, system prompt and
	// tools. A summary request holds no more, its own prompt included.
	Window int
	// Threshold is the share of the window past which the older part is
	// summarised; 0 means 0.8.
	Threshold float64
	// Keep is the share of the window the newest messages, sent verbatim,
	// may take; 0 means 0.5.
	Keep float64
	// KeepTurns is how many of the newest user and assistant messages are
	// sent verbatim even past Keep (never past the window); 0 means 4.
	KeepTurns int
	// SummaryShare bounds a summary, as it is sent, to this share of the
	// window; 0 means 0.2, and more than 0.5 means 0.5.
	SummaryShare float64
	// MaxSummaryBytes bounds a summary's text in bytes; 0 means 32 KiB.
	// A summary past either bound is cut (SummaryCutText), and the rest of
	// a longer answer is not read.
	MaxSummaryBytes int
	// Prompt is the summary request's system prompt; empty means
	// DefaultSummaryPrompt.
	Prompt string
}

// Compact implements loop.Compactor.
func (s Summarize) Compact(ctx context.Context, in loop.CompactInput) (loop.CompactOutput, error) {
	out, err := s.view(ctx, in)
	if out.Send != nil {
		out.Send = finish(out.Send)
	}
	return out, err
}

func (s Summarize) windowOf(in loop.CompactInput) int { return window(in, s.Window) }

func (s Summarize) trimmer() Trim { return Trim{Window: s.Window, KeepTurns: s.KeepTurns} }

// view trims, or summarises the older part when what would be sent passes
// the threshold.
func (s Summarize) view(ctx context.Context, in loop.CompactInput) (loop.CompactOutput, error) {
	budget := window(in, s.Window)
	if budget == 0 {
		return loop.CompactOutput{}, nil
	}
	threshold, keep := or(s.Threshold, 0.8), or(s.Keep, 0.5)
	trim := s.trimmer()
	limit := summaryBytes(budget, s.SummaryShare, s.MaxSummaryBytes)
	at, prev := latest(in.Transcript)
	before := sending(in.Transcript, at, prev, limit, 2*budget)
	// The newest messages, with room for the new summary at its longest.
	room := budget - (len(SummaryLead)+limit)/4 - 4 - leftOutTokens
	t := newestWithin(in.Transcript, int(float64(budget)*keep), room, trim.keepTurns(), limit)
	older := in.Transcript[t.from:t.first]
	if before <= int(float64(budget)*threshold) || t.whole || countMessages(older) == 0 {
		return trim.trim(in, "", limit), nil // nothing to summarise yet
	}
	var so string
	if t.summary != nil {
		so = t.summary.Summary
	}
	text, err := s.summarize(ctx, in, so, older, budget, limit)
	if err != nil {
		if ctx.Err() != nil {
			return loop.CompactOutput{}, err
		}
		// The error may quote a server at any length: the note quotes
		// at most httpx.MaxQuotedBytes of it.
		return trim.trim(in, "the summary failed ("+httpx.Quote(err.Error(), "")+"); trimmed instead", limit), nil
	}
	summary := providers.SummaryMessage{Summary: text, Through: t.first, Timestamp: stampAt(in.Now)}
	view := append([]providers.Message{providers.SummaryMessage{Summary: text, Timestamp: summary.Timestamp}}, t.msgs...)
	n := countMessages(older)
	return loop.CompactOutput{Send: view, Store: summary, Event: &events.Compacted{Strategy: "summarize",
		Before: before, After: sum(view), Summarized: n,
		Note: fmt.Sprintf("%d %s summarised in %d characters", n, plural(n, "message", "messages"), len(text))}}, nil
}

// sending estimates the request without compaction: the latest summary
// (at index at, cut to limit) and everything after what it stands for.
// Usage reported by a response after the summary counts for all before
// it, the summary included; the estimate gives up past giveUp.
func sending(transcript []providers.Message, at int, s providers.SummaryMessage, limit, giveUp int) int {
	n, from, summary := 0, 0, 0
	if at >= 0 {
		s.Summary = cut(s.Summary, limit)
		summary, from = Tokens(s), s.Through
	}
	for i := len(transcript) - 1; i >= from && n+summary <= giveUp; i-- {
		switch m := transcript[i].(type) {
		case providers.SummaryMessage:
			continue
		case providers.AssistantMessage:
			if u := m.Usage; i > at && u.Input+u.CacheRead+u.CacheWrite > 0 {
				return n + u.Input + u.CacheRead + u.CacheWrite + u.Output
			}
		}
		n += Tokens(transcript[i])
	}
	return n + summary
}

// summarize asks the model for a summary of the summary so far and the
// older messages: as many of the newest of them as fit the window with the
// request's prompt and framing. It reads at most limit bytes of the answer
// and cuts it to them.
func (s Summarize) summarize(ctx context.Context, in loop.CompactInput, so string, older []providers.Message, budget, limit int) (string, error) {
	if in.Provider == nil {
		return "", errors.New("no provider")
	}
	prompt := s.Prompt
	if prompt == "" {
		prompt = DefaultSummaryPrompt
	}
	text, err := summaryRequestText(so, older, (budget-len(prompt)/4-4-1)*4)
	if err != nil {
		return "", err
	}
	seq, err := in.Provider.Stream(ctx, &providers.Request{Model: in.Model, SystemPrompt: prompt,
		Messages: []providers.Message{providers.NewUserText(text)}, Options: in.Options, APIKey: in.APIKey, Time: in.Now})
	if err != nil {
		return "", err
	}
	var got strings.Builder
	var final *providers.AssistantMessage
	for ev := range seq {
		if ev.Type == providers.StreamTextDelta {
			got.WriteString(prefix(ev.Delta, limit+1-got.Len()))
			if got.Len() > limit {
				break // enough: the rest would be cut
			}
		}
		if ev.Type == providers.StreamDone || ev.Type == providers.StreamError {
			final = ev.Message
		}
	}
	answer := got.String()
	switch {
	case got.Len() > limit:
	case final == nil:
		return "", errors.New("the summary request ended without an answer")
	case final.StopReason == providers.StopReasonError || final.StopReason == providers.StopReasonAborted:
		return "", errors.New(final.ErrorMessage)
	default:
		answer = final.Text()
	}
	answer = strings.TrimSpace(answer)
	if answer == "" {
		return "", errors.New("the summary was empty")
	}
	return cut(answer, limit), nil
}

// summaryRequestText is the message of a summary request, at most room
// bytes: the summary so far, then a line for each of the newest older
// messages that fit (a line cut to its head and tail past a quarter of the
// room), the rest as SummaryLeftOut, then SummaryInstruction.
func summaryRequestText(so string, older []providers.Message, room int) (string, error) {
	fixed := len(SummaryLeftOut) + 1 + len(SummaryInstruction)
	if so != "" {
		fixed += len(SummarySoFar) + len(so) + len(SummaryAfter)
	}
	room -= fixed
	if room <= 0 {
		return "", errors.New("the summary prompt and the summary so far leave no room in the window")
	}
	lineCap := min(max(room/4, 2000), room)
	var lines []string
	used := 0
	leftOut := false
	for i := len(older) - 1; i >= 0; i-- {
		line := render(older[i])
		if line == "" {
			continue
		}
		if len(line)+1 > lineCap {
			line = prefix(line, lineCap/2-4) + " … " + suffix(line, lineCap/2-4)
		}
		if used+len(line)+1 > room {
			leftOut = true
			break
		}
		used += len(line) + 1
		lines = append(lines, line)
	}
	var b strings.Builder
	if so != "" {
		b.WriteString(SummarySoFar + so + SummaryAfter)
	}
	if leftOut {
		b.WriteString(SummaryLeftOut + "\n")
	}
	for i := len(lines) - 1; i >= 0; i-- {
		b.WriteString(lines[i])
		b.WriteString("\n")
	}
	b.WriteString(SummaryInstruction)
	return b.String(), nil
}

// suffix is s cut to at most its last n bytes on a character boundary.
func suffix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	i := len(s) - max(n, 0)
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// render is a message as a line of the text a summary is made from.
func render(m providers.Message) string {
	switch m := m.(type) {
	case providers.UserMessage:
		return "User: " + m.Text()
	case providers.AssistantMessage:
		var b strings.Builder
		b.WriteString("Assistant: " + m.Text())
		for _, c := range m.ToolCalls() {
			fmt.Fprintf(&b, "\n  called %s %s", c.Name, argumentsOf(c))
		}
		return b.String()
	case providers.ToolResultMessage:
		text := m.Text()
		if len(text) > 2000 {
			text = prefix(text, 1000) + " … " + suffix(text, 1000)
		}
		status := "result"
		if m.IsError {
			status = "error"
		}
		return fmt.Sprintf("Tool %s %s: %s", m.ToolName, status, text)
	}
	return ""
}

func argumentsOf(c providers.ToolCall) string {
	if c.RawArguments != "" {
		return c.RawArguments
	}
	return fmt.Sprint(c.Arguments)
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// stampAt is a timestamp by the run's clock (loop.CompactInput.Now), or by
// the wall clock when the run left it zero.
func stampAt(now time.Time) int64 {
	if now.IsZero() {
		return providers.Now()
	}
	return now.UnixMilli()
}
