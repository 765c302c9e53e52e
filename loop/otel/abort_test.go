package otel

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// TestCancelledBodyIsNoFailure: a body that gives up because the user
// aborted the run is counted as aborted, in its span's error.type and in
// the tool-call metric, not as a tool failure; a body that fails on its
// own before that is still a failure.
func TestCancelledBodyIsNoFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := newRecorded(Options{})
	look := tools.Must(tools.New(tools.Config{Name: "look"}, func(ctx context.Context, a qArgs) (string, error) {
		if a.Q == "broken" {
			return "", errors.New("index missing")
		}
		cancel() // the user aborts while this body runs
		<-ctx.Done()
		return "", ctx.Err()
	}))
	p := faux.New(faux.Reply(faux.Call("a", "look", map[string]any{"q": "broken"}), faux.Call("b", "look", map[string]any{"q": "slow"})))
	cfg := instrument(rec.tracer, loop.Config{Provider: p, Model: providers.Model{ID: "m1"}, ToolExecution: tools.Sequential})
	_, _ = loop.Run(ctx, []providers.Message{providers.NewUserText("go")}, loop.Conversation{Tools: []*tools.Tool{look}}, cfg, nil)
	calls := byName(rec.spans.Ended(), "execute_tool ")
	for id, want := range map[string]string{"a": "failed", "b": "aborted"} {
		if s := byCall(calls, id); s == nil || attr(s, keyErrorType).AsString() != want || attr(s, keyOutcome).AsString() != want {
			t.Fatalf("call %s: error.type %v, want %s", id, s, want)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := rec.metrics.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range d.DataPoints {
					v, _ := dp.Attributes.Value(keyOutcome)
					got[m.Name+"/"+v.AsString()] += dp.Value
				}
			}
		}
	}
	if got["agentloop.tool.calls/aborted"] != 1 || got["agentloop.tool.calls/failed"] != 1 {
		t.Fatalf("tool calls by outcome: %v", got)
	}
}
