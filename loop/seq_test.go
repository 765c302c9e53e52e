package loop

import (
	"context"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/providers/kit"
	"github.com/agentloop/agentloop/tools"
)

// TestEventsAreNumbered: a run with streamed text, parallel bodies that
// report progress, and a child run nested in one body's call, published on
// one Bus: every event has a position, each run's (the parent's at the
// empty path, the child's at its call id) follows the gap rule, and the
// child's events carry the path of the call that ran it.
func TestEventsAreNumbered(t *testing.T) {
	var bus events.Bus
	var check events.SeqCheck
	var mu sync.Mutex // the Bus delivers one event at a time; this guards the reads below
	var errs []error
	counts := map[string]int{}
	bus.Subscribe(func(_ context.Context, e events.Event) {
		mu.Lock()
		defer mu.Unlock()
		if err := check.Check(e); err != nil {
			errs = append(errs, err)
		}
		env := events.EnvelopeOf(e)
		counts[strings.Join(env.Path, ">")]++
		if env.Attempt != 0 {
			errs = append(errs, nil)
		}
	})

	child := faux.New(faux.Reply(faux.Text("the child's answer")))
	progress := func(ctx context.Context, a labelArgs) (tools.Result, error) {
		for i := range 3 {
			tools.ReportProgress(ctx, tools.TextResult(a.Label+string(rune('0'+i))))
		}
		if a.Label == "nest" {
			// A body running a nested run: its events go out through the
			// parent's bus with this call's id in front of their path.
			_, err := Run(ctx, []providers.Message{providers.NewUserText("child")}, Conversation{}, cfgFor(child),
				events.Nest(bus.Handle, tools.CallID(ctx)))
			if err != nil {
				return tools.Result{}, err
			}
		}
		return tools.TextResult("done " + a.Label), nil
	}
	p := faux.New(
		faux.Reply(faux.Text("let me look"),
			faux.Call("c1", "work", map[string]any{"label": "a"}),
			faux.Call("c2", "work", map[string]any{"label": "nest"}),
			faux.Call("c3", "work", map[string]any{"label": "b"})),
		faux.Reply(faux.Text("all done")))
	cfg := cfgFor(p)
	_, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")}, Conversation{Tools: []*tools.Tool{echoTool(t, "work", progress)}}, cfg, bus.Handle)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if counts[""] < 30 || counts["c2"] < 6 || len(counts) != 2 {
		t.Fatalf("events per path: %v", counts)
	}
}

// restarting streams a message, then starts it again as a second attempt
// (a provider that failed over mid-stream), and finishes with the second
// attempt's message.
type restarting struct{}

func (restarting) Stream(context.Context, *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	return func(yield func(providers.StreamEvent) bool) {
		first := kit.NewBuilder(providers.Model{ID: "m1", Provider: "p1", API: "a1"})
		for _, ev := range []providers.StreamEvent{first.Start(), first.TextStart(), first.TextDelta("half an ans")} {
			if !yield(ev) {
				return
			}
		}
		second := kit.NewBuilder(providers.Model{ID: "m2", Provider: "p2", API: "a2"})
		for _, ev := range []providers.StreamEvent{second.Start(), second.TextStart(), second.TextDelta("Whole."), second.TextEnd()} {
			if !yield(ev) {
				return
			}
		}
		yield(second.Done(providers.StopReasonStop, providers.Usage{}))
	}, nil
}

// TestSecondStartIsANewAttempt: a provider's second start goes out as the
// first update of attempt 1, numbered from Sub 1 again; an Assembler fed
// the run's events (and a SeqCheck) drops the first attempt's text; the
// transcript holds only the second attempt's message.
func TestSecondStartIsANewAttempt(t *testing.T) {
	rec := &recorder{}
	msgs, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")}, Conversation{}, cfgFor(restarting{}), rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	var a events.Assembler
	var check events.SeqCheck
	var restart *events.MessageUpdate
	for _, e := range rec.all() {
		if err := check.Check(e); err != nil {
			t.Fatal(err)
		}
		a.Add(e)
		if u, ok := e.(events.MessageUpdate); ok && u.Stream.Type == providers.StreamStart {
			restart = &u
			if m := a.Message(); m == nil || m.Text() != "" || m.Model != "m2" {
				t.Fatalf("after the restart: %+v", m)
			}
		}
		if u, ok := e.(events.MessageUpdate); ok && u.Stream.Type == providers.StreamTextEnd {
			if m := a.Message(); m.Text() != "Whole." {
				t.Fatalf("the message in flight: %q", m.Text())
			}
		}
	}
	if restart == nil || restart.Attempt != 1 || restart.Seq.Sub != 1 {
		t.Fatalf("restart %+v", restart)
	}
	got := last(msgs).(providers.AssistantMessage)
	if got.Text() != "Whole." || got.Model != "m2" {
		t.Fatalf("final %q from %s", got.Text(), got.Model)
	}
}
