package agent

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

func TestPanickingSubscriber(t *testing.T) {
	var logs bytes.Buffer
	a := mustNew(Options{Config: loop.Config{Provider: faux.New(faux.Reply(faux.Text("ok"))), Model: model, Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
	a.Subscribe(func(_ context.Context, e events.Event) {
		if e.Type() == events.TypeTurnStart {
			panic("subscriber bug")
		}
	})
	n := 0
	a.Subscribe(func(context.Context, events.Event) { n++ })
	if err := a.Prompt(context.Background(), providers.NewUserText("hi")); err != nil {
		t.Fatal(err)
	}
	if roles(a.State().Messages) != "user,assistant" || n < 8 {
		t.Fatalf("run disturbed: %s, %d events", roles(a.State().Messages), n)
	}
	if !strings.Contains(logs.String(), "subscriber bug") {
		t.Fatalf("panic not logged: %q", logs.String())
	}
}

// TestSlowSubscriber: a channel consumer far slower than the run gets
// every event, in order, and the run neither deadlocks nor drops any.
func TestSlowSubscriber(t *testing.T) {
	tool := tools.Must(tools.New(tools.Config{Name: "t"}, func(ctx context.Context, a labelArgs) (tools.Result, error) {
		up := func(p tools.Result) { tools.ReportProgress(ctx, p) }
		for range 5 {
			up(tools.TextResult("tick"))
		}
		return tools.TextResult(a.Label), nil
	}))
	p := faux.New(faux.Reply(faux.Text(strings.Repeat("stream ", 30)), faux.Call("a", "t", map[string]any{"label": "1"}), faux.Call("b", "t", map[string]any{"label": "2"})), faux.Reply(faux.Text("done")))
	a := newAgent(p, tool)
	var direct []string
	a.Subscribe(func(_ context.Context, e events.Event) { direct = append(direct, string(e.Type())) })
	ch, cancel := a.Channel(1)
	defer cancel()
	got := make(chan []string)
	go func() {
		var seen []string
		for e := range ch {
			time.Sleep(200 * time.Microsecond) // a slow consumer
			seen = append(seen, string(e.Type()))
			if e.Type() == events.TypeAgentEnd {
				break
			}
		}
		got <- seen
	}()
	if err := a.Prompt(context.Background(), providers.NewUserText("go")); err != nil {
		t.Fatal(err)
	}
	seen := <-got
	if strings.Join(seen, ",") != strings.Join(direct, ",") {
		t.Fatalf("slow consumer saw %d events, direct subscriber %d", len(seen), len(direct))
	}
}

// TestHookBlockedUntilCancelled: a policy hook that waits for its context
// is released by Abort, and the agent is idle again.
func TestHookBlockedUntilCancelled(t *testing.T) {
	tool := tools.Must(tools.New(tools.Config{Name: "t"}, func(context.Context, labelArgs) (tools.Result, error) {
		return tools.TextResult("ran"), nil
	}))
	inHook := make(chan struct{})
	a := mustNew(Options{
		Config: loop.Config{Provider: faux.New(faux.Reply(faux.Call("a", "t", map[string]any{"label": "x"}))), Model: model, Hooks: []loop.Hooks{{
			BeforeToolCall: func(ctx context.Context, _ loopBefore) (loopResult, error) {
				close(inHook)
				<-ctx.Done()
				return loopResult{}, nil
			},
		}}},
		Tools: []*tools.Tool{tool},
	})
	done := make(chan error)
	go func() { done <- a.Prompt(context.Background(), providers.NewUserText("go")) }()
	<-inHook
	a.Abort()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("an aborted Prompt returned %v", err)
	}
	s := a.State()
	if s.IsStreaming || s.Messages[2].(providers.ToolResultMessage).Text() != "Operation aborted" {
		t.Fatalf("state %+v", s)
	}
}
