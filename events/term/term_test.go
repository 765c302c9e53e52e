package term_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/events/term"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
	"github.com/agentloop/agentloop/tools"
)

// TestPrinter: streamed text, a tool call's start and end (error marked),
// a stopped run; a tool-argument delta is not printed as text.
func TestPrinter(t *testing.T) {
	var out strings.Builder
	p := term.New(&out)
	ctx := context.Background()
	b := kit.NewBuilder(providers.Model{ID: "m"})
	b.Start()
	b.TextStart()
	p.Handle(ctx, events.MessageUpdate{Stream: b.TextDelta("Hel")})
	p.Handle(ctx, events.MessageUpdate{Stream: b.TextDelta("lo")})
	b.ToolCallStart("c1", "read")
	p.Handle(ctx, events.MessageUpdate{Stream: b.ToolCallDelta(`{"path":`, nil)})
	p.Handle(ctx, events.ToolExecutionStart{ToolCallID: "c1", ToolName: "read", Args: map[string]any{"path": "a"}})
	p.Handle(ctx, events.ToolExecutionEnd{ToolCallID: "c1", ToolName: "read", IsError: true,
		Result: tools.TextResult("Validation failed for tool \"read\":\n  - path: must be string\n\nReceived arguments:\n{}")})
	p.Handle(ctx, events.MessageEnd{Message: providers.AssistantMessage{StopReason: providers.StopReasonError, ErrorMessage: "boom"}})
	got := out.String()
	for _, want := range []string{"assistant: Hello\n", `  → read {"path":"a"}`, "  ✗ read (", `Validation failed for tool "read":`, "assistant stopped (error): boom"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `{"path":`+"\n") || strings.Contains(got, "Received arguments") {
		t.Errorf("printed argument deltas or the echoed arguments:\n%s", got)
	}
}

// TestPrinterMarksANewAttempt: when the model's answer starts over (a
// retry or a failover), the printer says the text above is dropped and
// prints the new attempt's text on a line of its own.
func TestPrinterMarksANewAttempt(t *testing.T) {
	var out strings.Builder
	p := term.New(&out)
	ctx := context.Background()
	first := kit.NewBuilder(providers.Model{ID: "m1"})
	first.Start()
	first.TextStart()
	p.Handle(ctx, events.MessageUpdate{Stream: first.TextDelta("half an ans")})
	second := kit.NewBuilder(providers.Model{ID: "m2"})
	again := events.Envelope{Seq: events.Seq{N: 3, Sub: 1}, Attempt: 1}
	p.Handle(ctx, events.MessageUpdate{Envelope: again, Stream: second.Start()})
	second.TextStart()
	p.Handle(ctx, events.MessageUpdate{Stream: second.TextDelta("Whole."), Envelope: events.Envelope{Seq: events.Seq{N: 3, Sub: 3}, Attempt: 1}})
	want := "assistant: half an ans\n  [the answer above is dropped; it starts again (attempt 2, m2)]\nassistant: Whole."
	if got := out.String(); got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

func Example() {
	p := term.New(os.Stdout)
	ctx := context.Background()
	p.Handle(ctx, events.ToolExecutionStart{ToolCallID: "c1", ToolName: "weather", Args: map[string]any{"city": "Oslo"}})
	// Output:
	//   → weather {"city":"Oslo"}
}

// The reasoning of a model that thinks out loud is printed before its
// answer; term.Options{HideThinking: true} leaves it out.
func ExampleNewWith() {
	ctx := context.Background()
	b := kit.NewBuilder(providers.Model{ID: "m"})
	b.Start()
	for _, hide := range []bool{false, true} {
		p := term.NewWith(os.Stdout, term.Options{HideThinking: hide})
		b.ThinkingStart()
		p.Handle(ctx, events.MessageUpdate{Stream: b.ThinkingDelta("Two and three make five.")})
		p.Handle(ctx, events.MessageUpdate{Stream: b.ThinkingEnd("")})
		b.TextStart()
		p.Handle(ctx, events.MessageUpdate{Stream: b.TextDelta("5")})
		p.Handle(ctx, events.MessageUpdate{Stream: b.TextEnd()})
		p.Handle(ctx, events.MessageEnd{})
	}
	// Output:
	// thinking: Two and three make five.
	// assistant: 5
	// assistant: 5
}
