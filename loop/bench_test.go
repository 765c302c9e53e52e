package loop

import (
	"context"
	"fmt"
	"iter"
	"testing"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

type benchArgs struct {
	Path  string `json:"path"`
	Line  int    `json:"line"`
	Mode  string `json:"mode,omitempty" jsonschema:"enum=r,enum=w"`
	Force bool   `json:"force,omitempty"`
}

// turns is a provider that answers n tool turns of k calls, then "done".
type turns struct {
	n, k, i int
}

func (p *turns) Stream(context.Context, *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	i := p.i
	p.i++
	return func(yield func(providers.StreamEvent) bool) {
		base := &providers.AssistantMessage{StopReason: providers.StopReasonPending}
		if !yield(providers.StreamEvent{Type: providers.StreamStart, Message: base}) {
			return
		}
		final := &providers.AssistantMessage{StopReason: providers.StopReasonStop, Content: []providers.Content{providers.Text{Text: "done"}}}
		if i < p.n {
			final = &providers.AssistantMessage{StopReason: providers.StopReasonToolUse}
			for k := range p.k {
				final.Content = append(final.Content, providers.ToolCall{ID: fmt.Sprint(i, "_", k), Name: "read",
					Arguments: map[string]any{"path": "a.go", "line": "42", "mode": "r"}})
			}
		}
		yield(providers.StreamEvent{Type: providers.StreamDone, Reason: final.StopReason, Message: final})
	}, nil
}

func benchTurns(b *testing.B, k int) {
	read := tools.Must(tools.New(tools.Config{Name: "read"}, func(context.Context, benchArgs) (tools.Result, error) {
		return tools.TextResult("ok"), nil
	}))
	const n = 100
	b.ReportAllocs()
	for b.Loop() {
		cfg := Config{Provider: &turns{n: n, k: k}, Limits: Limits{MaxTurns: n + 1}}
		_, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")}, Conversation{Tools: []*tools.Tool{read}}, cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/turn")
}

// BenchmarkTurn1 is one tool call per turn (the long-run workload's shape).
func BenchmarkTurn1(b *testing.B) { benchTurns(b, 1) }

// BenchmarkTurn8 is eight calls per turn (tool-heavy's shape): bodies that
// return at once, started together on the run's workers and its goroutine.
func BenchmarkTurn8(b *testing.B) { benchTurns(b, 8) }
