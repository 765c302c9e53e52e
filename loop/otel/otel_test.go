package otel

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

type traced struct {
	spans   *tracetest.SpanRecorder
	metrics *sdkmetric.ManualReader
	tracer  *Tracer
}

func newRecorded(opts Options) *traced {
	r := &traced{spans: tracetest.NewSpanRecorder(), metrics: sdkmetric.NewManualReader()}
	opts.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	opts.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.metrics))
	r.tracer = New(opts)
	return r
}

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func byName(spans []sdktrace.ReadOnlySpan, prefix string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if strings.HasPrefix(s.Name(), prefix) {
			out = append(out, s)
		}
	}
	return out
}

type qArgs struct {
	Q string `json:"q"`
}

// TestSpansOfARun: a run with two tools in parallel and a refused call of
// each kind gives one invoke_agent span, a chat span per model call and an
// execute_tool span per call, nested under the run; bodies see their own
// span in their context and run at once; refusals are error spans that
// say which; nothing of the content is recorded.
func TestSpansOfARun(t *testing.T) {
	rec := newRecorded(Options{AgentName: "helper"})
	var mu sync.Mutex
	seen := map[string]trace.SpanContext{}
	var both sync.WaitGroup
	both.Add(2)
	body := func(ctx context.Context, in qArgs) (string, error) {
		mu.Lock()
		seen[tools.CallID(ctx)] = trace.SpanContextFromContext(ctx)
		mu.Unlock()
		both.Done()
		both.Wait() // both bodies run at once
		return "found " + in.Q, nil
	}
	look := tools.Must(tools.New(tools.Config{Name: "look"}, body))
	find := tools.Must(tools.New(tools.Config{Name: "find"}, body))
	guarded := tools.Must(tools.New(tools.Config{Name: "guarded"}, body))
	p := faux.New(
		faux.Reply(faux.Call("a", "look", map[string]any{"q": "secret-query"}), faux.Call("b", "find", map[string]any{"q": "x"}),
			faux.Call("c", "missing", nil), faux.Call("d", "look", map[string]any{"q": []any{1}}), faux.Call("e", "guarded", map[string]any{"q": "y"})),
		faux.Reply(faux.Text("the answer")))
	cfg := instrument(rec.tracer, loop.Config{Provider: p, Model: providers.Model{ID: "m1", Provider: "faux"}, Hooks: []loop.Hooks{{
		BeforeToolCall: func(_ context.Context, c loop.BeforeCall) (loop.BeforeResult, error) {
			return loop.BeforeResult{Block: c.Call.Name == "guarded"}, nil
		},
	}}})
	if _, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("secret-prompt")},
		loop.Conversation{Tools: []*tools.Tool{look, find, guarded}}, cfg, nil); err != nil {
		t.Fatal(err)
	}
	spans := rec.spans.Ended()
	runs, chats, calls := byName(spans, "invoke_agent"), byName(spans, "chat "), byName(spans, "execute_tool ")
	if len(runs) != 1 || len(chats) != 2 || len(calls) != 5 || len(spans) != 8 {
		t.Fatalf("%d runs, %d chats, %d calls, %d spans", len(runs), len(chats), len(calls), len(spans))
	}
	run := runs[0]
	if run.Name() != "invoke_agent helper" || attr(run, keyAgentName).AsString() != "helper" || run.Status().Code == codes.Error {
		t.Fatalf("run span %s %v", run.Name(), run.Status())
	}
	for _, s := range append(chats, calls...) {
		if s.Parent().SpanID() != run.SpanContext().SpanID() {
			t.Errorf("%s is not under the run", s.Name())
		}
	}
	if c := chats[0]; c.Name() != "chat m1" || attr(c, keyOperation).AsString() != "chat" || attr(c, keyProvider).AsString() != "faux" ||
		!slices.Equal(attr(c, keyFinishReasons).AsStringSlice(), []string{"toolUse"}) || c.SpanKind() != trace.SpanKindClient {
		t.Errorf("chat span %s %v", c.Name(), c.Attributes())
	}
	want := map[string]string{"a": "", "b": "", "c": "unknown_tool", "d": "invalid_arguments", "e": "blocked"}
	for _, s := range calls {
		id := attr(s, keyToolCallID).AsString()
		errType := attr(s, keyErrorType).AsString()
		if errType != want[id] || (errType != "") != (s.Status().Code == codes.Error) || attr(s, keyToolType).AsString() != "function" {
			t.Errorf("call %s: error.type %q, status %v", id, errType, s.Status())
		}
		if sc, ok := seen[id]; ok && sc.SpanID() != s.SpanContext().SpanID() {
			t.Errorf("call %s: the body's context carries another span", id)
		}
	}
	a, b := byCall(calls, "a"), byCall(calls, "b")
	if !a.StartTime().Before(b.EndTime()) || !b.StartTime().Before(a.EndTime()) {
		t.Error("the parallel calls' spans do not overlap")
	}
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			if v := kv.Value.String(); strings.Contains(v, "secret") || strings.Contains(v, "the answer") {
				t.Errorf("%s records content by default: %s=%s", s.Name(), kv.Key, v)
			}
		}
	}
}

func byCall(spans []sdktrace.ReadOnlySpan, id string) sdktrace.ReadOnlySpan {
	for _, s := range spans {
		if attr(s, keyToolCallID).AsString() == id {
			return s
		}
	}
	return nil
}

// TestFailures: a provider error makes an error chat span and an error
// run; a truncated response's calls and an abort say so.
func TestFailures(t *testing.T) {
	rec := newRecorded(Options{})
	msg := faux.Reply(faux.Call("cut", "look", map[string]any{"q": "x"}))
	msg.StopReason = providers.StopReasonLength
	p := faux.New(msg)
	p.Default = func(context.Context, *providers.Request) (providers.AssistantMessage, error) {
		return providers.AssistantMessage{}, errors.New("upstream 503")
	}
	look := tools.Must(tools.New(tools.Config{Name: "look"}, func(context.Context, qArgs) (string, error) { return "x", nil }))
	cfg := instrument(rec.tracer, loop.Config{Provider: p, Model: providers.Model{ID: "m1", Provider: "faux"}})
	_, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{Tools: []*tools.Tool{look}}, cfg, nil)
	if err == nil {
		t.Fatal("the run should fail")
	}
	spans := rec.spans.Ended()
	chats, calls, runs := byName(spans, "chat "), byName(spans, "execute_tool "), byName(spans, "invoke_agent")
	if len(chats) != 2 || chats[1].Status().Code != codes.Error || attr(chats[1], keyErrorType).AsString() != "error" {
		t.Fatalf("chats %d, the failed one %v", len(chats), chats[len(chats)-1].Status())
	}
	if len(calls) != 1 || attr(calls[0], keyErrorType).AsString() != "truncated" {
		t.Fatalf("the cut call: %v", calls[0].Attributes())
	}
	if runs[0].Status().Code != codes.Error {
		t.Fatalf("the run's status %v", runs[0].Status())
	}
	// An aborted run, and the call it refused.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec2 := newRecorded(Options{})
	cfg = instrument(rec2.tracer, loop.Config{Provider: faux.New(faux.Reply(faux.Call("after", "look", map[string]any{"q": "y"}))), Model: providers.Model{ID: "m1"}, Hooks: []loop.Hooks{{
		BeforeToolCall: func(context.Context, loop.BeforeCall) (loop.BeforeResult, error) {
			cancel() // the run is aborted while the call is being checked
			return loop.BeforeResult{}, nil
		},
	}}})
	_, _ = loop.Run(ctx, []providers.Message{providers.NewUserText("go")}, loop.Conversation{Tools: []*tools.Tool{look}}, cfg, nil)
	ended := rec2.spans.Ended()
	run := byName(ended, "invoke_agent")[0]
	if run.Status().Code != codes.Error || attr(run, keyErrorType).AsString() != "aborted" {
		t.Fatalf("the aborted run: %v %v", run.Status(), run.Attributes())
	}
	if after := byCall(byName(ended, "execute_tool "), "after"); after == nil || attr(after, keyErrorType).AsString() != "aborted" {
		t.Fatalf("the call after the abort: %v", after)
	}
}

// TestMetrics: token usage by type, one duration per model call, tool
// calls by outcome.
func TestMetrics(t *testing.T) {
	rec := newRecorded(Options{})
	first := faux.Reply(faux.Call("a", "look", map[string]any{"q": "x"}), faux.Call("b", "nope", nil))
	first.Usage = providers.Usage{Input: 100, Output: 20, CacheRead: 50}
	second := faux.Reply(faux.Text("done"))
	second.Usage = providers.Usage{Input: 200, Output: 5}
	look := tools.Must(tools.New(tools.Config{Name: "look"}, func(context.Context, qArgs) (string, error) { return "x", nil }))
	cfg := instrument(rec.tracer, loop.Config{Provider: faux.New(first, second), Model: providers.Model{ID: "m1", Provider: "faux"}})
	if _, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{Tools: []*tools.Tool{look}}, cfg, nil); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := rec.metrics.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[int64]:
				for _, dp := range d.DataPoints {
					v, _ := dp.Attributes.Value(keyTokenType)
					got[m.Name+"/"+v.AsString()] += dp.Sum
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					got[m.Name] += int64(dp.Count)
				}
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					v, _ := dp.Attributes.Value(keyOutcome)
					got[m.Name+"/"+v.AsString()] += dp.Value
				}
			}
		}
	}
	want := map[string]int64{"gen_ai.client.token.usage/input": 350, "gen_ai.client.token.usage/output": 25,
		"gen_ai.client.operation.duration": 2, "agentloop.tool.calls/ok": 1, "agentloop.tool.calls/unknown_tool": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
}

// TestContentWhenAsked: RecordContent puts the prompt, the answer, the
// arguments and the results on the spans.
func TestContentWhenAsked(t *testing.T) {
	rec := newRecorded(Options{RecordContent: true})
	look := tools.Must(tools.New(tools.Config{Name: "look"}, func(context.Context, qArgs) (string, error) { return "result-text", nil }))
	cfg := instrument(rec.tracer, loop.Config{Provider: faux.New(faux.Reply(faux.Call("a", "look", map[string]any{"q": "arg-text"})), faux.Reply(faux.Text("answer-text"))),
		Model: providers.Model{ID: "m1"}})
	if _, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("prompt-text")}, loop.Conversation{Tools: []*tools.Tool{look}}, cfg, nil); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, s := range rec.spans.Ended() {
		for _, kv := range s.Attributes() {
			all.WriteString(kv.Value.String())
		}
		for _, ev := range s.Events() {
			for _, kv := range ev.Attributes {
				all.WriteString(kv.Value.String())
			}
		}
	}
	for _, want := range []string{"prompt-text", "answer-text", "arg-text", "result-text"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no %s on the spans", want)
		}
	}
}

// TestNothingListening: with no-op providers a run gets no state, so each
// event costs one context lookup.
func TestNothingListening(t *testing.T) {
	tr := New(Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()})
	ctx := context.Background()
	if got := tr.Hooks().StepContext(ctx, loop.Step{Kind: loop.StepRun}); got.Value(runKey{}) != nil {
		t.Fatal("a run with nothing listening got state")
	}
}

// instrument adds t's bundle to cfg, as a user does.
func instrument(t *Tracer, cfg loop.Config) loop.Config {
	cfg.Hooks = append(cfg.Hooks, t.Hooks())
	return cfg
}
