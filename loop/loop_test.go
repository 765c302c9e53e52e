package loop

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// TestParallel64 runs 64 bodies at once: one total order of events, every
// start before its end, ends in completion order, results and transcript in
// call order.
func TestParallel64(t *testing.T) {
	const n = 64
	release := make(chan struct{})
	var started atomic.Int32
	allStarted := make(chan struct{})
	body := func(ctx context.Context, a labelArgs) (tools.Result, error) {
		up := func(p tools.Result) { tools.ReportProgress(ctx, p) }
		if started.Add(1) == n {
			close(allStarted)
		}
		up(tools.TextResult("working " + a.Label))
		<-release
		return tools.TextResult("done " + a.Label), nil
	}
	var calls []providers.Content
	for i := range n {
		calls = append(calls, faux.Call(fmt.Sprintf("c%02d", i), "work", map[string]any{"label": fmt.Sprint(i)}))
	}
	p := faux.New(faux.Reply(calls...), faux.Reply(faux.Text("ok")))
	go func() { <-allStarted; close(release) }()
	msgs, rec := runLoop(t, context.Background(), p, []*tools.Tool{echoTool(t, "work", body)}, Config{})

	seen := map[string]string{}
	for _, e := range rec.all() {
		switch e := e.(type) {
		case events.ToolExecutionStart:
			seen[e.ToolCallID] = "start"
		case events.ToolExecutionUpdate:
			if seen[e.ToolCallID] != "start" {
				t.Fatalf("update for %s after %q", e.ToolCallID, seen[e.ToolCallID])
			}
		case events.ToolExecutionEnd:
			if seen[e.ToolCallID] != "start" {
				t.Fatalf("end for %s without start", e.ToolCallID)
			}
			seen[e.ToolCallID] = "end"
		}
	}
	if got := len(rec.ends()); got != n {
		t.Fatalf("%d end events, want %d", got, n)
	}
	// Transcript: user, assistant, 64 results in call order, assistant.
	if len(msgs) != n+3 {
		t.Fatalf("%d messages", len(msgs))
	}
	for i := range n {
		tr := msgs[2+i].(providers.ToolResultMessage)
		if want := fmt.Sprintf("c%02d", i); tr.ToolCallID != want || tr.Text() != "done "+fmt.Sprint(i) {
			t.Fatalf("result %d = %s %q", i, tr.ToolCallID, tr.Text())
		}
	}
	req := p.Requests()[1]
	for i := range n {
		if id := req.Messages[2+i].(providers.ToolResultMessage).ToolCallID; id != fmt.Sprintf("c%02d", i) {
			t.Fatalf("model saw result %d as %s", i, id)
		}
	}
}

// TestEndsFollowCompletion checks that end events go out as bodies finish,
// not in call order, while results keep call order: the first call's body
// returns only once the second call's end has been published.
func TestEndsFollowCompletion(t *testing.T) {
	secondEnded := make(chan struct{})
	slow := echoTool(t, "slow", func(ctx context.Context, _ labelArgs) (tools.Result, error) {
		<-secondEnded
		return tools.TextResult("slow"), nil
	})
	fast := echoTool(t, "fast", nil)
	p := faux.New(faux.Reply(faux.Call("a", "slow", map[string]any{"label": "x"}), faux.Call("b", "fast", map[string]any{"label": "y"})), faux.Reply())
	rec := &recorder{}
	sink := func(ctx context.Context, e events.Event) {
		rec.sink(ctx, e)
		if end, ok := e.(events.ToolExecutionEnd); ok && end.ToolCallID == "b" {
			close(secondEnded)
		}
	}
	msgs, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")}, Conversation{Tools: []*tools.Tool{slow, fast}}, cfgFor(p), sink)
	if err != nil {
		t.Fatal(err)
	}
	ends := rec.ends()
	if ends[0].ToolCallID != "b" || ends[1].ToolCallID != "a" {
		t.Fatalf("end order %s,%s; want b,a", ends[0].ToolCallID, ends[1].ToolCallID)
	}
	if msgs[2].(providers.ToolResultMessage).ToolCallID != "a" {
		t.Fatal("results not in call order")
	}
}

func TestPreflightRefusals(t *testing.T) {
	echo := echoTool(t, "echo", nil)
	panicky := echoTool(t, "panicky", func(context.Context, labelArgs) (tools.Result, error) {
		panic("boom")
	})
	shim := toolWith(t, tools.Config{Name: "shim", PrepareArguments: func(map[string]any) (map[string]any, error) { panic("shim exploded") }}, nil)
	incomplete := faux.Call("c5", "echo", map[string]any{"label": "half"})
	incomplete.Incomplete = true
	p := faux.New(faux.Reply(
		faux.Call("c1", "nope", nil),
		faux.Call("c2", "echo", map[string]any{}),
		faux.Call("c3", "panicky", map[string]any{"label": "x"}),
		faux.Call("c4", "shim", map[string]any{"label": "x"}),
		incomplete,
		faux.Call("c6", "echo", map[string]any{"label": "fine"}),
	), faux.Reply(faux.Text("ok")))
	msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{echo, panicky, shim}, Config{})
	want := []struct {
		isError bool
		prefix  string
	}{
		{true, "Tool nope not found"},
		{true, `Validation failed for tool "echo":` + "\n  - label: must have required properties label"},
		{true, "panic: boom"},
		{true, "panic: shim exploded"},
		{true, `Tool call "echo" was not executed: its arguments were not complete JSON`},
		{false, "echo fine"},
	}
	for i, w := range want {
		tr := msgs[2+i].(providers.ToolResultMessage)
		if tr.IsError != w.isError || !strings.HasPrefix(tr.Text(), w.prefix) {
			t.Errorf("result %d: isError=%v %q; want %v %q", i, tr.IsError, tr.Text(), w.isError, w.prefix)
		}
	}
}

// TestHookGetsCopyAndReplacementIsValidated covers what we do beyond the
// reference: the policy hook's arguments are a copy, and replacement
// arguments are validated again.
func TestHookGetsCopyAndReplacementIsValidated(t *testing.T) {
	var got []string
	var mu sync.Mutex
	echo := echoTool(t, "echo", func(ctx context.Context, a labelArgs) (tools.Result, error) {
		id := tools.CallID(ctx)
		mu.Lock()
		got = append(got, id+"="+a.Label)
		mu.Unlock()
		return tools.TextResult(a.Label), nil
	})
	raw := map[string]any{"label": "orig"}
	p := faux.New(faux.Reply(
		faux.Call("mutate", "echo", raw),
		faux.Call("replace", "echo", map[string]any{"label": "orig"}),
		faux.Call("invalid", "echo", map[string]any{"label": "orig"}),
	), faux.Reply())
	cfg := Config{ToolExecution: tools.Sequential, Hooks: []Hooks{{
		BeforeToolCall: func(_ context.Context, c BeforeCall) (BeforeResult, error) {
			args := c.Args
			switch c.Call.ID {
			case "mutate":
				args["label"] = "mutated"
				return BeforeResult{}, nil
			case "replace":
				return BeforeResult{Args: map[string]any{"label": 7}}, nil // coerced to "7"
			default:
				return BeforeResult{Args: map[string]any{"label": []any{}}}, nil
			}
		},
	}}}
	msgs, rec := runLoop(t, context.Background(), p, []*tools.Tool{echo}, cfg)
	if strings.Join(got, ",") != "mutate=orig,replace=7" {
		t.Fatalf("bodies got %v", got)
	}
	if raw["label"] != "orig" {
		t.Fatal("the transcript's arguments changed")
	}
	if tr := msgs[4].(providers.ToolResultMessage); !tr.IsError || !strings.Contains(tr.Text(), "label: must be string") {
		t.Fatalf("invalid replacement: %q", tr.Text())
	}
	for _, e := range rec.all() {
		if s, ok := e.(events.ToolExecutionStart); ok && s.Args["label"] != "orig" {
			t.Fatalf("start event args %v", s.Args)
		}
	}
}

func TestBlockAndAfterOverrides(t *testing.T) {
	echo := echoTool(t, "echo", nil)
	p := faux.New(faux.Reply(
		faux.Call("a", "echo", map[string]any{"label": "1"}),
		faux.Call("b", "echo", map[string]any{"label": "2"}),
		faux.Call("c", "echo", map[string]any{"label": "3"}),
	), faux.Reply())
	yes := true
	cfg := Config{
		Hooks: []Hooks{{
			BeforeToolCall: func(_ context.Context, c BeforeCall) (BeforeResult, error) {
				if c.Call.ID == "a" {
					return BeforeResult{Block: true}, nil
				}
				return BeforeResult{}, nil
			},
			AfterToolCall: func(_ context.Context, c AfterCall) (AfterResult, error) {
				switch c.Call.ID {
				case "b":
					return AfterResult{Content: []providers.Content{providers.Text{Text: "redacted"}}, IsError: &yes}, nil
				case "c":
					panic("after exploded")
				}
				return AfterResult{}, nil
			},
		}},
	}
	msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{echo}, cfg)
	for i, want := range []string{"Tool execution was blocked", "redacted", "panic: after exploded"} {
		if tr := msgs[2+i].(providers.ToolResultMessage); !tr.IsError || tr.Text() != want {
			t.Errorf("result %d: %v %q, want error %q", i, tr.IsError, tr.Text(), want)
		}
	}
}

func TestTerminate(t *testing.T) {
	fin := echoTool(t, "finish", func(context.Context, labelArgs) (tools.Result, error) {
		return tools.Result{Content: []providers.Content{providers.Text{Text: "bye"}}, Terminate: true}, nil
	})
	p := faux.New(faux.Reply(faux.Call("a", "finish", map[string]any{"label": "x"})), faux.Reply(faux.Text("never")))
	msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{fin}, Config{})
	if len(msgs) != 3 || p.Pending() != 1 {
		t.Fatalf("terminating batch made another model call: %d messages, %d pending", len(msgs), p.Pending())
	}
}

// TestToolTimeout: a body that ignores cancellation gets an error result
// once its timeout passes; its late result is discarded.
func TestToolTimeout(t *testing.T) {
	unblock := make(chan struct{})
	exited := make(chan struct{})
	stuck := toolWith(t, tools.Config{Name: "stuck", Timeout: 20 * time.Millisecond}, func(ctx context.Context, _ labelArgs) (tools.Result, error) {
		defer close(exited)
		<-unblock
		tools.ReportProgress(ctx, tools.TextResult("too late"))
		return tools.TextResult("late"), nil
	})
	p := faux.New(faux.Reply(faux.Call("a", "stuck", map[string]any{"label": "x"})), faux.Reply())
	msgs, rec := runLoop(t, context.Background(), p, []*tools.Tool{stuck}, Config{})
	tr := msgs[2].(providers.ToolResultMessage)
	if !tr.IsError || !strings.Contains(tr.Text(), "timed out") {
		t.Fatalf("result %q", tr.Text())
	}
	n := len(rec.all())
	close(unblock)
	<-exited
	if len(rec.all()) != n {
		t.Fatal("a late update was published")
	}
}

func TestLateUpdatesIgnored(t *testing.T) {
	var saved func(tools.Result)
	tool := echoTool(t, "t", func(ctx context.Context, _ labelArgs) (tools.Result, error) {
		up := func(p tools.Result) { tools.ReportProgress(ctx, p) }
		up(tools.TextResult("live"))
		saved = up
		return tools.TextResult("ok"), nil
	})
	p := faux.New(faux.Reply(faux.Call("a", "t", map[string]any{"label": "x"})), faux.Reply())
	_, rec := runLoop(t, context.Background(), p, []*tools.Tool{tool}, Config{})
	n := len(rec.all())
	saved(tools.TextResult("late"))
	if len(rec.all()) != n {
		t.Fatal("update after the body returned was published")
	}
}

func TestCancelDuringStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := faux.New(faux.Reply(faux.Text(strings.Repeat("word ", 200))))
	p.ChunkSize = 1
	var deltas atomic.Int32
	rec := &recorder{}
	sink := func(c context.Context, e events.Event) {
		rec.sink(c, e)
		if _, ok := e.(events.MessageUpdate); ok && deltas.Add(1) == 10 {
			cancel()
		}
	}
	msgs, err := Run(ctx, []providers.Message{providers.NewUserText("go")}, Conversation{}, cfgFor(p), sink)
	var re *RunError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &re) || re.Message.StopReason != providers.StopReasonAborted {
		t.Fatalf("a cancelled run returned %v", err)
	}
	a := last(msgs).(providers.AssistantMessage)
	if a.StopReason != providers.StopReasonAborted || a.ErrorMessage != providers.AbortedMessage {
		t.Fatalf("last message %s %q", a.StopReason, a.ErrorMessage)
	}
	if a.Text() == "" || len(a.Text()) >= 1000 {
		t.Fatalf("partial text not kept: %d bytes", len(a.Text()))
	}
	ty := rec.types()
	if ty[len(ty)-1] != "agent_end" || ty[len(ty)-2] != "turn_end" {
		t.Fatalf("events end with %v", ty[len(ty)-3:])
	}
}

// TestCancelDuringHook: a hook that waits for cancellation turns its call
// into "Operation aborted"; no later call is prepared; the next model call
// comes back aborted.
func TestCancelDuringHook(t *testing.T) {
	for _, mode := range []tools.Mode{tools.Parallel, tools.Sequential} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			echo := echoTool(t, "echo", nil)
			p := faux.New(faux.Reply(faux.Call("a", "echo", map[string]any{"label": "1"}), faux.Call("b", "echo", map[string]any{"label": "2"})), faux.Reply())
			cfg := Config{ToolExecution: mode, Hooks: []Hooks{{
				BeforeToolCall: func(hctx context.Context, c BeforeCall) (BeforeResult, error) {
					cancel()
					<-hctx.Done()
					return BeforeResult{}, nil
				},
			}}}
			msgs, rec := runLoop(t, ctx, p, []*tools.Tool{echo}, cfg)
			if len(rec.ends()) != 1 || rec.ends()[0].ToolCallID != "a" {
				t.Fatalf("ends %v", rec.ends())
			}
			if tr := msgs[2].(providers.ToolResultMessage); tr.Text() != "Operation aborted" {
				t.Fatalf("result %q", tr.Text())
			}
			if a := last(msgs).(providers.AssistantMessage); a.StopReason != providers.StopReasonAborted {
				t.Fatalf("last stop reason %s", a.StopReason)
			}
		})
	}
}

// TestCancelDuringBodies: bodies that honour cancellation return errors;
// every prepared call still gets its result, and the run ends.
func TestCancelDuringBodies(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var started sync.WaitGroup
	started.Add(3)
	body := func(ctx context.Context, _ labelArgs) (tools.Result, error) {
		started.Done()
		<-ctx.Done()
		return tools.Result{}, ctx.Err()
	}
	go func() { started.Wait(); cancel() }()
	p := faux.New(faux.Reply(faux.Call("a", "w", map[string]any{"label": "1"}), faux.Call("b", "w", map[string]any{"label": "2"}), faux.Call("c", "w", map[string]any{"label": "3"})), faux.Reply())
	msgs, _ := runLoop(t, ctx, p, []*tools.Tool{echoTool(t, "w", body)}, Config{})
	for i := range 3 {
		if tr := msgs[2+i].(providers.ToolResultMessage); !tr.IsError || tr.Text() != "context canceled" {
			t.Fatalf("result %d %q", i, tr.Text())
		}
	}
	if a := last(msgs).(providers.AssistantMessage); a.StopReason != providers.StopReasonAborted {
		t.Fatalf("last stop reason %s", a.StopReason)
	}
}

func TestTruncatedResponseRunsNothing(t *testing.T) {
	ran := false
	echo := echoTool(t, "echo", func(context.Context, labelArgs) (tools.Result, error) {
		ran = true
		return tools.Result{}, nil
	})
	m := faux.Reply(faux.Call("a", "echo", map[string]any{"label": "x"}))
	m.StopReason = providers.StopReasonLength
	p := faux.New(m, faux.Reply(faux.Text("ok")))
	msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{echo}, Config{})
	if ran {
		t.Fatal("a body of a truncated response ran")
	}
	tr := msgs[2].(providers.ToolResultMessage)
	if !tr.IsError || !strings.Contains(tr.Text(), "output token limit") {
		t.Fatalf("result %q", tr.Text())
	}
}

func TestContinue(t *testing.T) {
	p := faux.New(faux.Reply(faux.Text("again")))
	if _, err := Continue(context.Background(), Conversation{}, cfgFor(p), nil); !errors.Is(err, ErrNoMessages) {
		t.Fatalf("empty: %v", err)
	}
	asst := Conversation{Messages: []providers.Message{providers.NewUserText("hi"), faux.Reply(faux.Text("x"))}}
	if _, err := Continue(context.Background(), asst, cfgFor(p), nil); !errors.Is(err, ErrContinueAssistant) {
		t.Fatalf("assistant tail: %v", err)
	}
	rec := &recorder{}
	msgs, err := Continue(context.Background(), Conversation{Messages: []providers.Message{providers.NewUserText("hi")}}, cfgFor(p), rec.sink)
	if err != nil || len(msgs) != 1 || msgs[0].Role() != providers.RoleAssistant {
		t.Fatalf("continue: %v %v", msgs, err)
	}
	if got := strings.Join(rec.types(), ","); got != "agent_start,turn_start,message_start,message_end,turn_end,agent_end" {
		t.Fatalf("events %s", got)
	}
}

type failingProvider struct{}

func (failingProvider) Stream(context.Context, *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	return nil, errors.New("misconfigured")
}

// TestFailuresCloseTheRun: a provider that refuses the request and a
// panicking hook end the run with the closing events a subscriber waits
// for and a *RunError carrying the cause; invalid arguments return an
// error before any event.
func TestFailuresCloseTheRun(t *testing.T) {
	prompt := []providers.Message{providers.NewUserText("go")}
	panicking := cfgFor(faux.New(faux.Reply()))
	panicking.Hooks = []Hooks{{ConvertToLLM: func(context.Context, []providers.Message) ([]providers.Message, error) { panic("convert exploded") }}}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"provider refuses", cfgFor(failingProvider{}), "misconfigured"},
		{"hook panics", panicking, "convert exploded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			msgs, err := Run(context.Background(), prompt, Conversation{}, tc.cfg, rec.sink)
			var re *RunError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) || re.Err == nil {
				t.Fatalf("error %v", err)
			}
			if got := strings.Join(rec.types(), ","); got != "agent_start,turn_start,message_start,message_end,message_start,message_end,turn_end,agent_end" {
				t.Fatalf("events %s", got)
			}
			if len(msgs) != 2 || !reflect.DeepEqual(msgs[1], providers.Message(re.Message)) || re.Message.StopReason != providers.StopReasonError {
				t.Fatalf("messages %v", msgs)
			}
		})
	}
	rec := &recorder{}
	if _, err := Run(context.Background(), prompt, Conversation{}, Config{}, rec.sink); !errors.Is(err, ErrNoProvider) || len(rec.all()) != 0 {
		t.Fatalf("nil provider: %v, %d events", err, len(rec.all()))
	}
	broken := []*tools.Tool{{}}
	if _, err := Run(context.Background(), prompt, Conversation{Tools: broken}, cfgFor(faux.New()), rec.sink); err == nil || len(rec.all()) != 0 {
		t.Fatalf("zero tool: %v, %d events", err, len(rec.all()))
	}
	twice := []*tools.Tool{echoTool(t, "a", nil), echoTool(t, "a", nil)}
	if _, err := Run(context.Background(), prompt, Conversation{Tools: twice}, cfgFor(faux.New()), rec.sink); err == nil || !strings.Contains(err.Error(), "two tools") {
		t.Fatalf("two tools of one name: %v", err)
	}
}

// TestPanickingHandler: an event handler that panics does not stop the
// run; the run ends and reports it.
func TestPanickingHandler(t *testing.T) {
	p := faux.New(faux.Reply(faux.Text("hi")))
	n := 0
	msgs, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")}, Conversation{}, cfgFor(p),
		func(context.Context, events.Event) { n++; panic("handler bug") })
	if err == nil || !strings.Contains(err.Error(), "handler bug") || len(msgs) != 2 || n < 6 {
		t.Fatalf("err %v, %d messages, %d events", err, len(msgs), n)
	}
}

// TestEventsAreImmutable keeps every streamed update and checks, under the
// race detector, that none changes while the run goes on.
func TestEventsAreImmutable(t *testing.T) {
	p := faux.New(faux.Reply(faux.Text(strings.Repeat("abcdefgh", 64)), faux.Call("a", "echo", map[string]any{"label": "x"})), faux.Reply())
	p.ChunkSize = 3
	var kept []events.MessageUpdate
	var texts []string
	sink := func(_ context.Context, e events.Event) {
		if u, ok := e.(events.MessageUpdate); ok {
			kept = append(kept, u)
			texts = append(texts, mustJSON(u.Stream.Partial()))
		}
	}
	_, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")}, Conversation{Tools: []*tools.Tool{echoTool(t, "echo", nil)}}, cfgFor(p), sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) < 100 {
		t.Fatalf("only %d updates", len(kept))
	}
	for i, u := range kept {
		if got := mustJSON(u.Stream.Partial()); got != texts[i] {
			t.Fatalf("update %d changed after it was published", i)
		}
	}
}

// TestTransformAndConvert: the transform applies to one request only, then
// the conversion; the API key resolver runs per call.
func TestTransformAndConvert(t *testing.T) {
	p := faux.New(faux.Reply(faux.Call("a", "echo", map[string]any{"label": "x"})), faux.Reply())
	calls := 0
	cfg := Config{
		Hooks: []Hooks{{
			TransformMessages: func(_ context.Context, ms []providers.Message) ([]providers.Message, error) {
				return ms[len(ms)-1:], nil
			},
			ConvertToLLM: func(_ context.Context, ms []providers.Message) ([]providers.Message, error) { return ms, nil },
			GetAPIKey: func(_ context.Context, provider string) (string, error) {
				calls++
				return fmt.Sprintf("key-%s-%d", provider, calls), nil
			},
		}},
	}
	msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{echoTool(t, "echo", nil)}, cfg)
	reqs := p.Requests()
	if len(reqs[1].Messages) != 1 || len(msgs) != 4 {
		t.Fatalf("transform leaked into the transcript: %d sent, %d kept", len(reqs[1].Messages), len(msgs))
	}
	if reqs[0].APIKey != "key-faux-1" || reqs[1].APIKey != "key-faux-2" {
		t.Fatalf("keys %q %q", reqs[0].APIKey, reqs[1].APIKey)
	}
}

func TestShouldStopAndPrepareNextTurn(t *testing.T) {
	p := faux.New(faux.Reply(faux.Call("a", "echo", map[string]any{"label": "x"})), faux.Reply(faux.Call("b", "echo", map[string]any{"label": "y"})), faux.Reply())
	turns := 0
	cfg := Config{
		Hooks: []Hooks{{
			PrepareNextTurn: func(_ context.Context, turn Turn) (TurnUpdate, error) {
				c := turn.Conversation
				c.SystemPrompt = "second prompt"
				return TurnUpdate{Conversation: &c}, nil
			},
			ShouldStopAfterTurn: func(_ context.Context, turn Turn) bool {
				turns++
				return turns == 2
			},
		}},
	}
	msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{echoTool(t, "echo", nil)}, cfg)
	if len(msgs) != 5 || p.Pending() != 1 {
		t.Fatalf("%d messages, %d pending", len(msgs), p.Pending())
	}
	if p.Requests()[1].SystemPrompt != "second prompt" {
		t.Fatal("PrepareNextTurn's context was not used")
	}
}

// TestNewMessagesSurviveAReplacedContext: when PrepareNextTurn swaps in a
// shorter transcript, the run still reports every message it added, in
// order, in its result, in agent_end and in each Turn.
func TestNewMessagesSurviveAReplacedContext(t *testing.T) {
	p := faux.New(faux.Reply(faux.Call("a", "echo", map[string]any{"label": "x"})), faux.Reply(faux.Call("b", "echo", map[string]any{"label": "y"})), faux.Reply())
	var seen []int
	cfg := Config{Hooks: []Hooks{{
		PrepareNextTurn: func(_ context.Context, turn Turn) (TurnUpdate, error) {
			seen = append(seen, len(turn.NewMessages))
			c := turn.Conversation
			c.Messages = c.Messages[len(c.Messages)-1:] // keep only the last message
			return TurnUpdate{Conversation: &c}, nil
		},
	}}}
	msgs, rec := runLoop(t, context.Background(), p, []*tools.Tool{echoTool(t, "echo", nil)}, cfg)
	// user, assistant a, result a, assistant b, result b, final assistant
	if len(msgs) != 6 || msgs[0].Role() != providers.RoleUser || msgs[5].Role() != providers.RoleAssistant {
		t.Fatalf("run returned %d messages", len(msgs))
	}
	if !slices.Equal(seen, []int{3, 5, 6}) {
		t.Fatalf("turns saw %v new messages, want [3 5 6]", seen)
	}
	end := rec.all()[len(rec.all())-1].(events.AgentEnd)
	if !reflect.DeepEqual(end.Messages, msgs) {
		t.Fatal("agent_end's messages differ from the run's")
	}
	if got := p.Requests()[2].Messages; len(got) != 1 || got[0].Role() != providers.RoleToolResult {
		t.Fatalf("third request carried %d messages, want only the kept result", len(got))
	}
}
