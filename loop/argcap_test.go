package loop

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
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

// TestRefusalCap: a refusal whose listing quotes arguments nested deep
// (within MaxArgumentBytes, but a hundred times larger indented) is cut to
// MaxResultBytes, head and tail, the listing kept; so is a policy hook's
// long reason. A short refusal is the reference's text, untouched.
func TestRefusalCap(t *testing.T) {
	const maxResult = 16 << 10
	nested := strings.Repeat("[", 90) + strings.Repeat("0,", 30000) + "0" + strings.Repeat("]", 90)
	deep := faux.Call("a", "echo", nil)
	deep.RawArguments = `{"label":` + nested + `}`
	if err := json.Unmarshal([]byte(deep.RawArguments), &deep.Arguments); err != nil {
		t.Fatal(err)
	}
	notObject := faux.Call("b", "echo", nil)
	notObject.RawArguments = nested
	blocked := faux.Call("c", "echo", map[string]any{"label": "block me"})
	small := faux.Call("d", "echo", map[string]any{"label": map[string]any{"x": 1.0}})
	p := &parsedOnly{calls: []providers.ToolCall{deep, notObject, blocked, small}}
	cfg := Config{RequestOptions: providers.RequestOptions{MaxArgumentBytes: 128 << 10}, Limits: Limits{MaxResultBytes: maxResult}, Hooks: []Hooks{{
		BeforeToolCall: func(_ context.Context, c BeforeCall) (BeforeResult, error) {
			return BeforeResult{Block: c.Call.ID == "c", Reason: "no: " + strings.Repeat("r", 100000) + " end"}, nil
		},
	}}}
	echo := echoTool(t, "echo", nil)
	msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{echo}, cfg)
	for i, want := range []struct{ head, tail string }{
		{"Validation failed for tool \"echo\":\n  - label: must be string\n\nReceived arguments:\n{\n  \"label\": [\n", "\n  ]\n}"},
		{"Validation failed for tool \"echo\":\n  - root: must be object\n\nReceived arguments:\n[\n", "\n]"},
		{"no: rrrr", "rrrr end"},
	} {
		text := msgs[2+i].(providers.ToolResultMessage).Text()
		if len(text) > maxResult+64 || !strings.HasPrefix(text, want.head) || !strings.HasSuffix(text, want.tail) || !strings.Contains(text, " bytes left out ...]\n") {
			t.Fatalf("refusal %d: %d bytes: %.300q ... %q", i, len(text), text, text[max(0, len(text)-100):])
		}
	}
	want := "Validation failed for tool \"echo\":\n  - label: must be string\n\nReceived arguments:\n{\n  \"label\": {\n    \"x\": 1\n  }\n}"
	if text := msgs[5].(providers.ToolResultMessage).Text(); text != want {
		t.Fatalf("the small call: %q", text)
	}
}
