package loop

import (
	"context"
	"iter"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// parsedOnly is a model whose tool calls come with parsed arguments and
// no argument text, as from a provider that does not stream them as text.
type parsedOnly struct {
	calls []providers.ToolCall
	done  bool
}

func (p *parsedOnly) Stream(context.Context, *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	final := &providers.AssistantMessage{StopReason: providers.StopReasonStop, Content: []providers.Content{providers.Text{Text: "done"}}}
	if !p.done {
		p.done = true
		final = &providers.AssistantMessage{StopReason: providers.StopReasonToolUse}
		for _, c := range p.calls {
			final.Content = append(final.Content, c)
		}
	}
	return func(yield func(providers.StreamEvent) bool) {
		if yield(providers.StreamEvent{Type: providers.StreamStart, Message: &providers.AssistantMessage{StopReason: providers.StopReasonPending}}) {
			yield(providers.StreamEvent{Type: providers.StreamDone, Reason: final.StopReason, Message: final})
		}
	}, nil
}

// TestArgumentCapWithoutText: arguments that came without their text are
// held to MaxArgumentBytes by the size of their JSON; the body never runs.
func TestArgumentCapWithoutText(t *testing.T) {
	ran := 0
	echo := echoTool(t, "echo", func(_ context.Context, a labelArgs) (tools.Result, error) {
		ran++
		return tools.TextResult("ok"), nil
	})
	huge := strings.Repeat("y", 5000)
	p := &parsedOnly{calls: []providers.ToolCall{
		{ID: "a", Name: "echo", Arguments: map[string]any{"label": huge}},
		{ID: "b", Name: "echo", Arguments: map[string]any{"label": "x", "more": []any{map[string]any{"deep": huge}}}},
		{ID: "c", Name: "echo", Arguments: map[string]any{"label": "small"}},
	}}
	msgs, rec := runLoop(t, context.Background(), p, []*tools.Tool{echo}, Config{RequestOptions: providers.RequestOptions{MaxArgumentBytes: 2048}})
	want := []string{
		`Tool call "echo" was not executed: its arguments are 5013 bytes, more than the limit of 2048 bytes.`,
		`Tool call "echo" was not executed: its arguments are 5037 bytes, more than the limit of 2048 bytes.`,
		"ok",
	}
	for i, w := range want {
		if tr := msgs[2+i].(providers.ToolResultMessage); tr.Text() != w {
			t.Fatalf("call %d: %q, want %q", i, tr.Text(), w)
		}
	}
	if ends := rec.ends(); ends[0].Outcome != events.OutcomeInvalid || ends[1].Outcome != events.OutcomeInvalid || ran != 1 {
		t.Fatalf("outcomes %s %s, %d bodies ran", ends[0].Outcome, ends[1].Outcome, ran)
	}
}
