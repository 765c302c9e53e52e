package loop

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/providers/kit"
	"github.com/agentloop/agentloop/tools"
)

// scriptedFault is a provider that streams events from a function, for
// injecting faults at any point of a stream.
type scriptedFault func(b *kit.Builder, yield func(providers.StreamEvent) bool)

func (f scriptedFault) Stream(_ context.Context, req *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	return func(yield func(providers.StreamEvent) bool) { f(kit.NewBuilder(req.Model), yield) }, nil
}

// TestProviderFaults: a stream that fails before its first event, in the
// middle of text or of a tool call, or misbehaves after done, ends the run
// with a message saying what happened and a *RunError whose message it is.
// Nothing escapes as a panic, and no tool runs on a broken response.
func TestProviderFaults(t *testing.T) {
	ran := false
	echo := echoTool(t, "echo", func(context.Context, labelArgs) (tools.Result, error) {
		ran = true
		return tools.TextResult("ran"), nil
	})
	tests := []struct {
		name   string
		script scriptedFault
		stop   providers.StopReason
		text   string // kept text
		errSub string
	}{
		{"nothing at all", func(*kit.Builder, func(providers.StreamEvent) bool) {},
			providers.StopReasonError, "", "ended without a final message"},
		{"panic before the first event", func(*kit.Builder, func(providers.StreamEvent) bool) { panic("socket exploded") },
			providers.StopReasonError, "", "provider failed: panic: socket exploded"},
		{"mid-text", func(b *kit.Builder, y func(providers.StreamEvent) bool) {
			_ = y(b.Start()) && y(b.TextDelta("half a sen"))
		}, providers.StopReasonError, "half a sen", "ended without a final message"},
		{"panic mid-tool-call", func(b *kit.Builder, y func(providers.StreamEvent) bool) {
			_ = y(b.Start()) && y(b.ToolCallStart("c1", "echo")) && y(b.ToolCallDelta(`{"label":`, nil))
			panic("decoder bug")
		}, providers.StopReasonError, "", "panic: decoder bug"},
		{"misbehaves after done", func(b *kit.Builder, y func(providers.StreamEvent) bool) {
			_ = y(b.Start()) && y(b.TextDelta("all good"))
			y(b.Done(providers.StopReasonStop, providers.Usage{}))
			y(b.TextDelta("ignored")) // keeps going after the consumer stopped
		}, providers.StopReasonStop, "all good", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			msgs, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")},
				Conversation{Tools: []*tools.Tool{echo}}, cfgFor(tc.script), rec.sink)
			a := last(msgs).(providers.AssistantMessage)
			var re *RunError
			if failed := tc.stop == providers.StopReasonError; failed != errors.As(err, &re) || (failed && !reflect.DeepEqual(re.Message, a)) {
				t.Fatalf("error %v for a run ending with stop reason %s", err, a.StopReason)
			}
			if a.StopReason != tc.stop || a.Text() != tc.text || !strings.Contains(a.ErrorMessage, tc.errSub) {
				t.Fatalf("last message %s %q %q", a.StopReason, a.Text(), a.ErrorMessage)
			}
			if ty := rec.types(); ty[len(ty)-1] != "agent_end" {
				t.Fatalf("run did not close: %v", ty)
			}
			if ran {
				t.Fatal("a tool ran on a broken response")
			}
		})
	}
}

func TestResourceCaps(t *testing.T) {
	huge := echoTool(t, "huge", func(context.Context, labelArgs) (tools.Result, error) {
		return tools.TextResult(strings.Repeat("x", 5000)), nil
	})
	big := faux.Call("c2", "huge", map[string]any{"label": strings.Repeat("y", 3000)})
	big.RawArguments = `{"label":"` + strings.Repeat("y", 3000) + `"}`
	p := faux.New(faux.Reply(faux.Call("c1", "huge", map[string]any{"label": "x"}), big), faux.Reply())
	msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{huge}, Config{RequestOptions: providers.RequestOptions{MaxArgumentBytes: 2048}, Limits: Limits{MaxResultBytes: 4096}})
	if tr := msgs[2].(providers.ToolResultMessage); !tr.IsError || !strings.Contains(tr.Text(), "5016 bytes of content, more than the limit of 4096") {
		t.Fatalf("oversized result: %q", tr.Text())
	}
	if tr := msgs[3].(providers.ToolResultMessage); !tr.IsError || !strings.Contains(tr.Text(), "more than the limit of 2048 bytes") {
		t.Fatalf("oversized arguments: %q", tr.Text())
	}
	// Negative means no cap.
	p = faux.New(faux.Reply(faux.Call("c1", "huge", map[string]any{"label": "x"})), faux.Reply())
	msgs, _ = runLoop(t, context.Background(), p, []*tools.Tool{huge}, Config{Limits: Limits{MaxResultBytes: -1}})
	if tr := msgs[2].(providers.ToolResultMessage); tr.IsError {
		t.Fatalf("uncapped result refused: %q", tr.Text())
	}
}

// TestIsolation: whatever a body or hook does to the arguments it received
// changes neither the transcript nor a published event, and error results
// do not share their details.
func TestIsolation(t *testing.T) {
	mutate := func(v any) {
		if m, ok := v.(map[string]any); ok {
			m["label"] = "MUTATED"
			m["extra"] = true
		}
	}
	body := tools.Must(tools.NewJSON(tools.Config{Name: "raw"}, []byte(`{"type":"object","properties":{"label":{"type":"string"}}}`),
		func(_ context.Context, args map[string]any) (tools.Result, error) {
			mutate(args)
			return tools.TextResult("ok"), nil
		}))
	p := faux.New(faux.Reply(faux.Call("c1", "raw", map[string]any{"label": "orig"}), faux.Call("c2", "nope", nil), faux.Call("c3", "nope", nil)), faux.Reply())
	cfg := Config{
		Hooks: []Hooks{{
			BeforeToolCall: func(_ context.Context, c BeforeCall) (BeforeResult, error) {
				mutate(c.Args)
				return BeforeResult{}, nil
			},
			AfterToolCall: func(_ context.Context, c AfterCall) (AfterResult, error) {
				mutate(c.Args)
				return AfterResult{}, nil
			},
		}},
	}
	msgs, rec := runLoop(t, context.Background(), p, []*tools.Tool{body}, cfg)
	call := msgs[1].(providers.AssistantMessage).ToolCalls()[0]
	if call.Arguments["label"] != "orig" || len(call.Arguments) != 1 {
		t.Fatalf("transcript arguments changed: %v", call.Arguments)
	}
	for _, e := range rec.all() {
		if s, ok := e.(events.ToolExecutionStart); ok && s.ToolCallID == "c1" && (s.Args["label"] != "orig" || len(s.Args) != 1) {
			t.Fatalf("event arguments changed: %v", s.Args)
		}
	}
	d2 := msgs[3].(providers.ToolResultMessage).Details.(map[string]any)
	d3 := msgs[4].(providers.ToolResultMessage).Details.(map[string]any)
	d2["k"] = 1
	if _, shared := d3["k"]; shared {
		t.Fatal("two error results share one details object")
	}
}

// TestIsolationTyped: a typed body's map and interface fields are its own,
// even though preflight shares what coercion left alone with the call.
func TestIsolationTyped(t *testing.T) {
	type nested struct {
		Meta map[string]any `json:"meta"`
		Any  any            `json:"any"`
		List []any          `json:"list"`
	}
	typed := tools.Must(tools.New(tools.Config{Name: "typed"}, func(_ context.Context, a nested) (tools.Result, error) {
		a.Meta["k"] = "MUTATED"
		a.Any.(map[string]any)["k"] = "MUTATED"
		a.List[0].(map[string]any)["k"] = "MUTATED"
		return tools.TextResult("ok"), nil
	}))
	args := func() map[string]any {
		return map[string]any{"meta": map[string]any{"k": "v"}, "any": map[string]any{"k": "v"}, "list": []any{map[string]any{"k": "v"}}}
	}
	p := faux.New(faux.Reply(faux.Call("c1", "typed", args())), faux.Reply())
	msgs, rec := runLoop(t, context.Background(), p, []*tools.Tool{typed}, Config{})
	if r := msgs[2].(providers.ToolResultMessage); r.IsError {
		t.Fatalf("call failed: %s", r.Text())
	}
	if got := msgs[1].(providers.AssistantMessage).ToolCalls()[0].Arguments; !reflect.DeepEqual(got, args()) {
		t.Fatalf("transcript arguments changed: %v", got)
	}
	for _, e := range rec.all() {
		if s, ok := e.(events.ToolExecutionStart); ok && !reflect.DeepEqual(s.Args, args()) {
			t.Fatalf("event arguments changed: %v", s.Args)
		}
	}
}

// TestMessageLimits: a call whose id an earlier call of the message has,
// calls past MaxToolCalls, arguments that arrived whole but are not an
// object, and arguments over the cap (counted by the provider) are each
// refused with a message that says so, and their bodies never run.
func TestMessageLimits(t *testing.T) {
	var ran []string
	var mu sync.Mutex
	echo := echoTool(t, "echo", func(ctx context.Context, a labelArgs) (tools.Result, error) {
		mu.Lock()
		ran = append(ran, tools.CallID(ctx))
		mu.Unlock()
		return tools.TextResult("ok"), nil
	})
	array := faux.Call("arr", "echo", nil)
	array.RawArguments = `[1, 2]`
	over := faux.Call("big", "echo", map[string]any{})
	over.RawArguments, over.ArgumentBytes, over.Incomplete = `{"label":"xxx`, 5000, true
	p := &verbatim{replies: []providers.AssistantMessage{faux.Reply(
		faux.Call("a", "echo", map[string]any{"label": "1"}),
		faux.Call("a", "echo", map[string]any{"label": "2"}),
		array, over,
		faux.Call("c4", "echo", map[string]any{"label": "4"}),
		faux.Call("c5", "echo", map[string]any{"label": "5"}),
	), faux.Reply()}}
	msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{echo}, Config{RequestOptions: providers.RequestOptions{MaxArgumentBytes: 1000}, Limits: Limits{MaxToolCalls: 5}})
	want := []struct {
		isError bool
		text    string
	}{
		{false, "ok"},
		{true, `its id "a" is the id of an earlier call in this message`},
		{true, "Validation failed for tool \"echo\":\n  - root: must be object\n\nReceived arguments:\n[\n  1,\n  2\n]"},
		{true, "its arguments are 5000 bytes, more than the limit of 1000 bytes"},
		{false, "ok"},
		{true, "the message has 6 tool calls, more than the limit of 5 per message"},
	}
	for i, w := range want {
		tr := msgs[2+i].(providers.ToolResultMessage)
		if tr.IsError != w.isError || !strings.Contains(tr.Text(), w.text) {
			t.Errorf("result %d (%s): error=%v %q, want error=%v and %q", i, tr.ToolCallID, tr.IsError, tr.Text(), w.isError, w.text)
		}
	}
	sort.Strings(ran)
	if strings.Join(ran, ",") != "a,c4" {
		t.Fatalf("bodies ran for %v", ran)
	}
}

// TestMaxTurns: a model that calls tools forever is stopped after
// MaxTurns model calls, with every result of the last turn stored and a
// closing error message; a model that is done at the limit ends normally.
func TestMaxTurns(t *testing.T) {
	p := &faux.Provider{}
	p.Default = func(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
		return faux.Reply(faux.Call(fmt.Sprint("c", len(req.Messages)), "echo", map[string]any{"label": "again"})), nil
	}
	rec := &recorder{}
	cfg := cfgFor(p)
	cfg.Limits.MaxTurns = 3
	msgs, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")}, Conversation{Tools: []*tools.Tool{echoTool(t, "echo", nil)}}, cfg, rec.sink)
	var re *RunError
	if !errors.As(err, &re) || !errors.Is(err, ErrMaxTurns) || re.Message.StopReason != providers.StopReasonError {
		t.Fatalf("error %v", err)
	}
	if len(p.Requests()) != 3 || len(msgs) != 8 || msgs[6].Role() != providers.RoleToolResult {
		t.Fatalf("%d model calls, %d messages", len(p.Requests()), len(msgs))
	}
	if ty := rec.types(); ty[len(ty)-1] != "agent_end" {
		t.Fatalf("run did not close: %v", ty)
	}
	done := faux.New(faux.Reply(faux.Text("finished")))
	cfg = cfgFor(done)
	cfg.Limits.MaxTurns = 1
	if _, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")}, Conversation{}, cfg, nil); err != nil {
		t.Fatalf("a model done at the limit: %v", err)
	}
}

// verbatim is a provider that delivers scripted messages exactly as they
// are (faux re-streams them, which rebuilds raw argument text).
type verbatim struct {
	replies []providers.AssistantMessage
}

func (p *verbatim) Stream(context.Context, *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	m := p.replies[0]
	p.replies = p.replies[1:]
	if m.StopReason == "" {
		m.StopReason = providers.StopReasonStop
		if m.HasToolCalls() {
			m.StopReason = providers.StopReasonToolUse
		}
	}
	return func(yield func(providers.StreamEvent) bool) {
		if yield(providers.StreamEvent{Type: providers.StreamStart, Message: &providers.AssistantMessage{}}) {
			yield(providers.StreamEvent{Type: providers.StreamDone, Reason: m.StopReason, Message: &m})
		}
	}, nil
}
