package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var model = providers.Model{ID: "faux-1", API: "faux", Provider: "faux"}

// mustNew is New for options known to be valid.
func mustNew(opts Options) *Agent {
	a, err := New(opts)
	if err != nil {
		panic(err)
	}
	return a
}

func newAgent(p providers.Provider, ts ...*tools.Tool) *Agent {
	return mustNew(Options{Config: loop.Config{Provider: p, Model: model}, Tools: ts})
}

func roles(msgs []providers.Message) string {
	var out []string
	for _, m := range msgs {
		s := string(m.Role())
		if u, ok := m.(providers.UserMessage); ok && u.Text() != "go" && u.Text() != "hi" {
			s = u.Text()
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

// gate is a scripted step that waits for release before answering.
func gate(reached chan<- struct{}, release <-chan struct{}, reply providers.AssistantMessage) faux.Step {
	return func(ctx context.Context, _ *providers.Request) (providers.AssistantMessage, error) {
		close(reached)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return reply, nil
	}
}

type labelArgs struct {
	Label string `json:"label"`
}

func TestDefaultAndInitialState(t *testing.T) {
	s := mustNew(Options{Config: loop.Config{Provider: faux.New()}}).State()
	if s.SystemPrompt != "" || len(s.Tools) != 0 || len(s.Messages) != 0 || s.IsStreaming || s.StreamingMessage != nil ||
		len(s.PendingToolCalls) != 0 || s.ErrorMessage != "" {
		t.Fatalf("default state %+v", s)
	}
	tool := tools.Must(tools.New(tools.Config{Name: "t"}, func(context.Context, labelArgs) (tools.Result, error) {
		return tools.Result{}, nil
	}))
	a := mustNew(Options{Config: loop.Config{Provider: faux.New(), Model: model}, SystemPrompt: "be brief", Tools: []*tools.Tool{tool}, Messages: []providers.Message{providers.NewUserText("x")}})
	s = a.State()
	if s.SystemPrompt != "be brief" || s.Model != model || len(s.Tools) != 1 || len(s.Messages) != 1 {
		t.Fatalf("initial state %+v", s)
	}
}

func TestSubscribeAndUnsubscribe(t *testing.T) {
	a := newAgent(faux.New(faux.Reply(faux.Text("a")), faux.Reply(faux.Text("b"))))
	var n int
	unsub := a.Subscribe(func(context.Context, events.Event) { n++ })
	if err := a.Configure(func(o *Options) { o.SystemPrompt = "x" }); err != nil { // state changes emit nothing
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatal("subscribe or a mutator emitted an event")
	}
	if err := a.Prompt(context.Background(), providers.NewUserText("hi")); err != nil {
		t.Fatal(err)
	}
	got := n
	unsub()
	_ = a.Prompt(context.Background(), providers.NewUserText("hi"))
	if n != got || got == 0 {
		t.Fatalf("events after unsubscribe: %d -> %d", got, n)
	}
}

type refusing struct{}

func (refusing) Stream(context.Context, *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	return nil, errors.New("provider exploded")
}

// TestFailedRun: a run the provider refuses still closes with a full event
// sequence and an error message in the transcript, and Prompt returns a
// *loop.RunError holding that message.
func TestFailedRun(t *testing.T) {
	a := newAgent(refusing{})
	var types []string
	a.Subscribe(func(_ context.Context, e events.Event) { types = append(types, string(e.Type())) })
	err := a.Prompt(context.Background(), providers.NewUserText("hi"))
	var re *loop.RunError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "provider exploded") {
		t.Fatalf("Prompt error %v", err)
	}
	if got := strings.Join(types, ","); got != "agent_start,turn_start,message_start,message_end,message_start,message_end,turn_end,agent_end" {
		t.Fatalf("events %s", got)
	}
	s := a.State()
	last := s.Messages[len(s.Messages)-1].(providers.AssistantMessage)
	if roles(s.Messages) != "user,assistant" || last.StopReason != providers.StopReasonError ||
		!strings.Contains(last.ErrorMessage, "provider exploded") || s.ErrorMessage != last.ErrorMessage || s.IsStreaming {
		t.Fatalf("state %+v", s)
	}
	// The agent is idle again.
	if err := a.Prompt(context.Background(), providers.NewUserText("hi")); err == nil {
		t.Fatal("second run should fail the same way")
	}
}

// TestSubscribersAreAwaited: the agent is busy until the agent_end
// subscriber returns; Prompt and Wait return only then.
func TestSubscribersAreAwaited(t *testing.T) {
	a := newAgent(faux.New(faux.Reply(faux.Text("ok"))))
	inEnd := make(chan struct{})
	release := make(chan struct{})
	a.Subscribe(func(_ context.Context, e events.Event) {
		if e.Type() == events.TypeAgentEnd {
			close(inEnd)
			<-release
		}
	})
	done := make(chan error)
	go func() { done <- a.Prompt(context.Background(), providers.NewUserText("hi")) }()
	<-inEnd
	if !a.State().IsStreaming {
		t.Fatal("idle while a subscriber still handles agent_end")
	}
	waited := make(chan struct{})
	go func() { _ = a.Wait(context.Background()); close(waited) }()
	select {
	case <-done:
		t.Fatal("Prompt returned before the subscriber")
	case <-waited:
		t.Fatal("Wait returned before the subscriber")
	default:
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-waited
	if a.State().IsStreaming {
		t.Fatal("still streaming")
	}
}

func TestAbortReachesSubscribersContext(t *testing.T) {
	reached, release := make(chan struct{}), make(chan struct{})
	p := faux.New()
	p.PushFunc(gate(reached, release, faux.Reply(faux.Text("late"))))
	a := newAgent(p)
	var runCtx context.Context
	a.Subscribe(func(ctx context.Context, e events.Event) {
		if e.Type() == events.TypeAgentStart {
			runCtx = ctx
		}
	})
	done := make(chan error)
	go func() { done <- a.Prompt(context.Background(), providers.NewUserText("hi")) }()
	<-reached
	if runCtx.Err() != nil {
		t.Fatal("run context cancelled too early")
	}
	a.Abort()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("an aborted Prompt returned %v", err)
	}
	if runCtx.Err() == nil {
		t.Fatal("subscriber's context not cancelled by Abort")
	}
	s := a.State()
	if last := s.Messages[len(s.Messages)-1].(providers.AssistantMessage); last.StopReason != providers.StopReasonAborted {
		t.Fatalf("last message %s", last.StopReason)
	}
	close(release)
	a.Abort() // idle: a no-op
}

func TestBusyErrors(t *testing.T) {
	reached, release := make(chan struct{}), make(chan struct{})
	p := faux.New()
	p.PushFunc(gate(reached, release, faux.Reply(faux.Text("ok"))))
	a := newAgent(p)
	done := make(chan error)
	go func() { done <- a.Prompt(context.Background(), providers.NewUserText("hi")) }()
	<-reached
	if roles(a.State().Messages) != "user" {
		t.Fatalf("mid-run transcript %s", roles(a.State().Messages))
	}
	for name, err := range map[string]error{
		"prompt":    a.Prompt(context.Background(), providers.NewUserText("again")),
		"continue":  a.Continue(context.Background()),
		"reset":     a.Reset(),
		"configure": a.Configure(func(*Options) { t.Error("Configure called f during a run") }),
		"load":      a.LoadSession(strings.NewReader("")),
	} {
		if !errors.Is(err, ErrBusy) {
			t.Errorf("%s while busy: %v", name, err)
		}
	}
	if !strings.Contains(ErrBusy.Error(), "Steering or FollowUps queue") {
		t.Errorf("ErrBusy does not point to the queues: %v", ErrBusy)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if roles(a.State().Messages) != "user,assistant" {
		t.Fatalf("transcript %s", roles(a.State().Messages))
	}
	if err := a.Reset(); err != nil || len(a.State().Messages) != 0 {
		t.Fatalf("reset when idle: %v", err)
	}
}

// drainTool queues s1, s2 as steering and f1, f2 as follow-ups while it
// runs.
func drainTool(a **Agent) *tools.Tool {
	return tools.Must(tools.New(tools.Config{Name: "queue"}, func(context.Context, labelArgs) (tools.Result, error) {
		(*a).Steering().Push(providers.NewUserText("s1"))
		(*a).Steering().Push(providers.NewUserText("s2"))
		(*a).FollowUps().Push(providers.NewUserText("f1"))
		(*a).FollowUps().Push(providers.NewUserText("f2"))
		return tools.TextResult("queued"), nil
	}))
}

func TestDrainOrders(t *testing.T) {
	tests := []struct {
		mode QueueMode
		want string
	}{
		{QueueOneAtATime, "user,assistant,toolResult,s1,assistant,s2,assistant,f1,assistant,f2,assistant"},
		{QueueAll, "user,assistant,toolResult,s1,s2,assistant,f1,f2,assistant"},
	}
	for _, tc := range tests {
		var a *Agent
		p := faux.New(faux.Reply(faux.Call("c1", "queue", map[string]any{"label": "x"})))
		for range 5 {
			p.Push(faux.Reply(faux.Text("ok")))
		}
		a = mustNew(Options{Config: loop.Config{Provider: p, Model: model}, Tools: []*tools.Tool{drainTool(&a)}, SteeringMode: tc.mode, FollowUpMode: tc.mode})
		if err := a.Prompt(context.Background(), providers.NewUserText("go")); err != nil {
			t.Fatal(err)
		}
		if got := roles(a.State().Messages); got != tc.want {
			t.Errorf("mode %d:\n got %s\nwant %s", tc.mode, got, tc.want)
		}
	}
}

func TestSteerAndFollowUpDoNotTouchTranscript(t *testing.T) {
	a := newAgent(faux.New())
	a.Steering().Push(providers.NewUserText("s"))
	a.FollowUps().Push(providers.NewUserText("f"))
	a.Steering().Push(nil, providers.NewUserText("s2"), nil)
	if len(a.State().Messages) != 0 || a.Steering().Len() != 2 || a.FollowUps().Len() != 1 {
		t.Fatalf("queueing changed the transcript or was lost: %d steering, %d follow-ups", a.Steering().Len(), a.FollowUps().Len())
	}
	a.Steering().Clear()
	if a.Steering().Len() != 0 || a.FollowUps().Len() != 1 {
		t.Fatal("clearing one queue touched the other")
	}
	if err := a.Reset(); err != nil || a.FollowUps().Len() != 0 {
		t.Fatalf("Reset left %d follow-ups (%v)", a.FollowUps().Len(), err)
	}
}

func TestContinue(t *testing.T) {
	p := faux.New(faux.Reply(faux.Text("a")), faux.Reply(faux.Text("b")), faux.Reply(faux.Text("c")), faux.Reply(faux.Text("d")))
	a := newAgent(p)
	if err := a.Continue(context.Background()); !errors.Is(err, loop.ErrNoMessages) {
		t.Fatalf("empty: %v", err)
	}
	_ = a.Prompt(context.Background(), providers.NewUserText("hi"))
	if err := a.Continue(context.Background()); !errors.Is(err, loop.ErrContinueAssistant) {
		t.Fatalf("assistant tail, nothing queued: %v", err)
	}
	// One-at-a-time steering from an assistant tail: each steer gets its
	// own model call.
	a.Steering().Push(providers.NewUserText("s1"))
	a.Steering().Push(providers.NewUserText("s2"))
	if err := a.Continue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := roles(a.State().Messages); got != "user,assistant,s1,assistant,s2,assistant" {
		t.Fatalf("steering continue: %s", got)
	}
	a.FollowUps().Push(providers.NewUserText("f1"))
	if err := a.Continue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := roles(a.State().Messages); !strings.HasSuffix(got, "f1,assistant") || p.Pending() != 0 {
		t.Fatalf("follow-up continue: %s", got)
	}
	// From a user tail the loop continues directly.
	b := mustNew(Options{Config: loop.Config{Provider: faux.New(faux.Reply(faux.Text("x"))), Model: model}, Messages: []providers.Message{providers.NewUserText("hi")}})
	if err := b.Continue(context.Background()); err != nil || roles(b.State().Messages) != "user,assistant" {
		t.Fatalf("user tail: %v %s", err, roles(b.State().Messages))
	}
}

func TestPendingToolCallsAndLateUpdates(t *testing.T) {
	var saved func(tools.Result)
	inBody := make(chan []string, 1)
	var a *Agent
	tool := tools.Must(tools.New(tools.Config{Name: "t"}, func(ctx context.Context, _ labelArgs) (tools.Result, error) {
		up := func(p tools.Result) { tools.ReportProgress(ctx, p) }
		inBody <- a.State().PendingToolCalls
		up(tools.TextResult("progress"))
		saved = up
		return tools.Result{Content: []providers.Content{providers.Text{Text: "ok"}}, Terminate: true}, nil
	}))
	p := faux.New(faux.Reply(faux.Call("c1", "t", map[string]any{"label": "x"})))
	a = newAgent(p, tool)
	updates := 0
	a.Subscribe(func(_ context.Context, e events.Event) {
		if e.Type() == events.TypeToolExecutionUpdate {
			updates++
		}
	})
	if err := a.Prompt(context.Background(), providers.NewUserText("hi")); err != nil {
		t.Fatal(err)
	}
	if got := <-inBody; len(got) != 1 || got[0] != "c1" {
		t.Fatalf("pending during the body: %v", got)
	}
	saved(tools.TextResult("after the end"))
	if updates != 1 || len(a.State().PendingToolCalls) != 0 || len(p.Requests()) != 1 {
		t.Fatalf("updates %d, pending %v, calls %d", updates, a.State().PendingToolCalls, len(p.Requests()))
	}
}

func TestStateSnapshotIsACopy(t *testing.T) {
	a := mustNew(Options{Config: loop.Config{Provider: faux.New()}, Messages: []providers.Message{providers.NewUserText("x")}})
	s := a.State()
	s.Messages[0] = providers.NewUserText("changed")
	s.Messages = append(s.Messages, providers.NewUserText("more"))
	s.Tools = append(s.Tools, nil)
	if got := a.State(); len(got.Messages) != 1 || got.Messages[0].(providers.UserMessage).Text() != "x" || len(got.Tools) != 0 {
		t.Fatalf("snapshot changes reached the agent: %+v", got)
	}
	msgs := []providers.Message{providers.NewUserText("y")}
	if err := a.Configure(func(o *Options) { o.Messages = msgs }); err != nil {
		t.Fatal(err)
	}
	msgs[0] = providers.NewUserText("z")
	if a.State().Messages[0].(providers.UserMessage).Text() != "y" {
		t.Fatal("Configure kept the caller's slice")
	}
}

func TestShouldStopAfterTurnForwarded(t *testing.T) {
	tool := tools.Must(tools.New(tools.Config{Name: "t"}, func(context.Context, labelArgs) (tools.Result, error) {
		return tools.TextResult("ok"), nil
	}))
	p := faux.New(faux.Reply(faux.Call("c1", "t", map[string]any{"label": "x"})), faux.Reply(faux.Text("never")))
	var seen string
	a := mustNew(Options{
		Config: loop.Config{Provider: p, Model: model, Hooks: []loop.Hooks{{
			ShouldStopAfterTurn: func(_ context.Context, turn loop.Turn) bool {
				seen = roles(turn.Conversation.Messages)
				return true
			},
		}}},
		Tools: []*tools.Tool{tool},
	})
	if err := a.Prompt(context.Background(), providers.NewUserText("hi")); err != nil {
		t.Fatal(err)
	}
	if seen != "user,assistant,toolResult" || len(p.Requests()) != 1 {
		t.Fatalf("seen %s, %d calls", seen, len(p.Requests()))
	}
}

func TestSessionRoundTrip(t *testing.T) {
	tool := tools.Must(tools.New(tools.Config{Name: "t"}, func(context.Context, labelArgs) (tools.Result, error) {
		return tools.TextResult("ok"), nil
	}))
	a := newAgent(faux.New(faux.Reply(faux.Text("thinking"), faux.Call("c1", "t", map[string]any{"label": "x"})), faux.Reply(faux.Text("done"))), tool)
	if err := a.Prompt(context.Background(), providers.NewUserText("hi")); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := a.SaveSession(&buf); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 4 {
		t.Fatalf("%d lines", n)
	}
	b := newAgent(faux.New(faux.Reply(faux.Text("resumed"))), tool)
	if err := b.LoadSession(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if err := b.Prompt(context.Background(), providers.NewUserText("more")); err != nil {
		t.Fatal(err)
	}
	if got := roles(b.State().Messages); got != "user,assistant,toolResult,assistant,more,assistant" {
		t.Fatalf("resumed transcript %s", got)
	}
	// A truncated last line keeps everything before it.
	cut := buf.Bytes()[:buf.Len()-20]
	msgs, err := ReadSession(bytes.NewReader(cut))
	var se *SessionError
	if !errors.As(err, &se) || se.Line != 4 || len(msgs) != 3 {
		t.Fatalf("truncated: %d messages, %v", len(msgs), err)
	}
	// LoadSession refuses it whole and keeps the transcript it had.
	before := b.State().Messages
	if err := b.LoadSession(bytes.NewReader(cut)); !errors.As(err, &se) {
		t.Fatalf("LoadSession of a truncated session: %v", err)
	}
	if !reflect.DeepEqual(b.State().Messages, before) {
		t.Fatal("a failed LoadSession changed the transcript")
	}
}

// TestConcurrentUse drives one agent from many goroutines at once.
func TestConcurrentUse(t *testing.T) {
	p := faux.New()
	for range 200 {
		p.Push(faux.Reply(faux.Text("ok")))
	}
	a := newAgent(p)
	var wg sync.WaitGroup
	var busy, ran sync.Map
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 5 {
				unsub := a.Subscribe(func(context.Context, events.Event) { _ = a.State() })
				a.Steering().Push(providers.NewUserText(fmt.Sprint("s", i, j)))
				a.FollowUps().Push(providers.NewUserText(fmt.Sprint("f", i, j)))
				err := a.Prompt(context.Background(), providers.NewUserText("hi"))
				if errors.Is(err, ErrBusy) {
					busy.Store(i, true)
				} else if err == nil {
					ran.Store(i, true)
				}
				if j == 2 {
					a.Abort()
				}
				_ = a.State()
				unsub()
			}
		}()
	}
	wg.Wait()
	if err := a.Wait(context.Background()); err != nil || a.State().IsStreaming {
		t.Fatal("agent not idle after all callers returned")
	}
}

// TestHundredAgents runs 100 agents with tools at once.
func TestHundredAgents(t *testing.T) {
	tool := tools.Must(tools.New(tools.Config{Name: "t"}, func(_ context.Context, a labelArgs) (tools.Result, error) {
		return tools.TextResult(a.Label), nil
	}))
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := faux.New(faux.Reply(faux.Call("a", "t", map[string]any{"label": fmt.Sprint(i)}), faux.Call("b", "t", map[string]any{"label": "x"})), faux.Reply(faux.Text("done")))
			a := newAgent(p, tool)
			if err := a.Prompt(context.Background(), providers.NewUserText("go")); err != nil {
				errs <- err
				return
			}
			s := a.State()
			if roles(s.Messages) != "user,assistant,toolResult,toolResult,assistant" || s.Messages[2].(providers.ToolResultMessage).Text() != fmt.Sprint(i) {
				errs <- fmt.Errorf("agent %d: %s", i, roles(s.Messages))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

type (
	loopBefore = loop.BeforeCall
	loopResult = loop.BeforeResult
)

// TestSettledParallelUpdateIgnored: a body that already ended publishes no
// update, even while a sibling still runs (SPEC §5.2 #11).
func TestSettledParallelUpdateIgnored(t *testing.T) {
	var fastUpdate func(tools.Result)
	fastDone := make(chan struct{})
	slowMayEnd := make(chan struct{})
	fast := tools.Must(tools.New(tools.Config{Name: "fast"}, func(ctx context.Context, _ labelArgs) (tools.Result, error) {
		up := func(p tools.Result) { tools.ReportProgress(ctx, p) }
		fastUpdate = up
		return tools.TextResult("fast"), nil
	}))
	slow := tools.Must(tools.New(tools.Config{Name: "slow"}, func(ctx context.Context, _ labelArgs) (tools.Result, error) {
		<-fastDone
		fastUpdate(tools.TextResult("late, from a settled call"))
		close(slowMayEnd)
		return tools.TextResult("slow"), nil
	}))
	p := faux.New(faux.Reply(faux.Call("s", "slow", map[string]any{"label": "x"}), faux.Call("f", "fast", map[string]any{"label": "y"})), faux.Reply(faux.Text("ok")))
	a := newAgent(p, slow, fast)
	updates := 0
	a.Subscribe(func(_ context.Context, e events.Event) {
		switch e := e.(type) {
		case events.ToolExecutionUpdate:
			updates++
		case events.ToolExecutionEnd:
			if e.ToolCallID == "f" {
				close(fastDone)
			}
		}
	})
	if err := a.Prompt(context.Background(), providers.NewUserText("go")); err != nil {
		t.Fatal(err)
	}
	<-slowMayEnd
	if updates != 0 {
		t.Fatalf("%d updates from a settled call", updates)
	}
}

// TestRequestOptionsReachProvider: request options reach the provider, and
// a change takes effect on the next run (SPEC §5.2 #23).
func TestRequestOptionsReachProvider(t *testing.T) {
	p := faux.New(faux.Reply(faux.Text("a")), faux.Reply(faux.Text("b")))
	a := mustNew(Options{Config: loop.Config{Provider: p, Model: model, RequestOptions: providers.RequestOptions{Reasoning: "low", MaxTokens: 100}}})
	_ = a.Prompt(context.Background(), providers.NewUserText("hi"))
	if err := a.Configure(func(o *Options) { o.RequestOptions = providers.RequestOptions{Reasoning: "high"} }); err != nil {
		t.Fatal(err)
	}
	_ = a.Prompt(context.Background(), providers.NewUserText("hi"))
	reqs := p.Requests()
	if reqs[0].Options.Reasoning != "low" || reqs[0].Options.MaxTokens != 100 || reqs[1].Options.Reasoning != "high" {
		t.Fatalf("options %+v / %+v", reqs[0].Options, reqs[1].Options)
	}
}

// outside is a loop.Queue of the caller's own: one follow-up, once.
type outside struct{ sent bool }

func (q *outside) Steering(context.Context) []providers.Message { return nil }

func (q *outside) FollowUp(context.Context) []providers.Message {
	if q.sent {
		return nil
	}
	q.sent = true
	return []providers.Message{providers.NewUserText("from outside")}
}

// TestOptionsQueueFollowsTheAgents: a Queue in the options is polled after
// the agent's own queues, and its messages follow theirs; nothing in the
// options is refused.
func TestOptionsQueueFollowsTheAgents(t *testing.T) {
	p := faux.New(faux.Reply(faux.Text("first")), faux.Reply(faux.Text("second")))
	a := mustNew(Options{Config: loop.Config{Provider: p, Model: model, Queue: &outside{}}})
	a.FollowUps().Push(providers.NewUserText("from the agent"))
	if err := a.Prompt(context.Background(), providers.NewUserText("go")); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	var texts []string
	for _, m := range reqs[1].Messages {
		if u, ok := m.(providers.UserMessage); ok {
			texts = append(texts, providers.TextOf(u.Content))
		}
	}
	if want := []string{"go", "from the agent", "from outside"}; !slices.Equal(texts, want) {
		t.Fatalf("user messages %q, want %q", texts, want)
	}
}
