package compact

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
)

// DefaultSummaryPrompt is the system prompt of a summary request.
const DefaultSummaryPrompt = "You summarise conversations between a user and an AI assistant that uses tools, " +
	"so that the assistant can go on without the full history. Keep what the user asked for, decisions made, " +
	"facts learned from tools (file names, values, errors), and what is still to do. Write plain prose, at most " +
	"a few hundred words. Do not call tools."

// Summarize replaces the older part of a conversation that nears its
// window with a summary the model writes, keeping the newest turns
// verbatim. The summary is stored in the transcript (a
// providers.SummaryMessage): later requests send it in place of what it
// stands for, and a later summary covers it and what came after, never
// the original messages again. A summary that fails falls back to Trim,
// and the event says so.
type Summarize struct {
	// Window is the tokens a request's messages may hold; 0 means the
	// model's context window less its output reserve, system prompt and
	// tools.
	Window int
	// Threshold is the share of the window past which the older part is
	// summarised; 0 means 0.8.
	Threshold float64
	// Keep is the share of the window the newest messages, sent verbatim,
	// may take; 0 means 0.5.
	Keep float64
	// KeepTurns is how many of the newest user and assistant messages are
	// always sent verbatim; 0 means 4.
	KeepTurns int
	// Prompt is the summary request's system prompt; empty means
	// DefaultSummaryPrompt.
	Prompt string
}

// Compact implements loop.Compactor.
func (s Summarize) Compact(ctx context.Context, in loop.CompactInput) (loop.CompactOutput, error) {
	budget := window(in, s.Window)
	threshold, keep := or(s.Threshold, 0.8), or(s.Keep, 0.5)
	trim := Trim{Window: s.Window, KeepTurns: s.KeepTurns}
	if budget == 0 {
		return loop.CompactOutput{}, nil
	}
	before := estimateUpTo(in.Transcript, 2*budget)
	t := newestWithin(in.Transcript, int(float64(budget)*keep), trim.keepTurns())
	if before <= int(float64(budget)*threshold) || t.whole {
		return trim.trim(in, ""), nil // nothing to summarise yet
	}
	// Summarise from the last summary's end (or the start) to the tail.
	from := 0
	var prev string
	if t.summary != nil {
		from, prev = min(t.summary.Through, len(in.Transcript)), t.summary.Summary
	}
	older := in.Transcript[from:t.first]
	text, err := s.summarize(ctx, in, prev, older, budget)
	if err != nil {
		if ctx.Err() != nil {
			return loop.CompactOutput{}, err
		}
		return trim.trim(in, "the summary failed ("+err.Error()+"); trimmed instead"), nil
	}
	summary := providers.SummaryMessage{Summary: text, Through: t.first, Timestamp: providers.Now()}
	send := append([]providers.Message{summaryText(summary)}, t.msgs...)
	return loop.CompactOutput{Send: send, Store: summary, Event: &events.Compacted{Strategy: "summarize",
		Before: before, After: sum(send), Summarized: countMessages(older),
		Note: fmt.Sprintf("%d messages summarised in %d characters", countMessages(older), len(text))}}, nil
}

func (s Trim) keepTurns() int {
	if s.KeepTurns <= 0 {
		return 4
	}
	return s.KeepTurns
}

func or(v, def float64) float64 {
	if v <= 0 || v > 1 {
		return def
	}
	return v
}

func countMessages(msgs []providers.Message) int {
	n := 0
	for _, m := range msgs {
		if _, ok := m.(providers.SummaryMessage); !ok {
			n++
		}
	}
	return n
}

// summarize asks the model for a summary of the previous summary and the
// older messages (as much of their newest part as fits the window).
func (s Summarize) summarize(ctx context.Context, in loop.CompactInput, prev string, older []providers.Message, budget int) (string, error) {
	if in.Provider == nil {
		return "", errors.New("no provider")
	}
	var parts []string
	used := len(prev) / 4
	for i := len(older) - 1; i >= 0; i-- {
		line := render(older[i])
		if line == "" {
			continue
		}
		if used+len(line)/4 > budget {
			parts = append(parts, "[earlier messages left out]")
			break
		}
		used += len(line) / 4
		parts = append(parts, line)
	}
	var b strings.Builder
	if prev != "" {
		b.WriteString("Summary so far:\n" + prev + "\n\nWhat came after:\n")
	}
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
		b.WriteString("\n")
	}
	b.WriteString("\nSummarise the conversation above.")
	prompt := s.Prompt
	if prompt == "" {
		prompt = DefaultSummaryPrompt
	}
	seq, err := in.Provider.Stream(ctx, &providers.Request{Model: in.Model, SystemPrompt: prompt,
		Messages: []providers.Message{providers.NewUserText(b.String())}, Options: in.Options})
	if err != nil {
		return "", err
	}
	var final *providers.AssistantMessage
	for ev := range seq {
		if ev.Type == providers.StreamDone || ev.Type == providers.StreamError {
			final = ev.Message
		}
	}
	switch {
	case final == nil:
		return "", errors.New("the summary request ended without an answer")
	case final.StopReason == providers.StopReasonError || final.StopReason == providers.StopReasonAborted:
		return "", errors.New(final.ErrorMessage)
	case strings.TrimSpace(final.Text()) == "":
		return "", errors.New("the summary was empty")
	}
	return strings.TrimSpace(final.Text()), nil
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
			text = text[:1000] + " … " + text[len(text)-1000:]
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
