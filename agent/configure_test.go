package agent

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

func echo(t *testing.T, name string) *tools.Tool {
	t.Helper()
	tl, err := tools.New(tools.Config{Name: name, Description: "echo"}, func(context.Context, struct{}) (string, error) { return "ok", nil })
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// TestConfigureRefusesWhatNewRefuses: options New would refuse change
// nothing, through Configure as through New.
func TestConfigureRefusesWhatNewRefuses(t *testing.T) {
	one := echo(t, "one")
	cases := []struct {
		name string
		f    func(*Options)
		want string
	}{
		{"no provider", func(o *Options) { o.Provider = nil }, loop.ErrNoProvider.Error()},
		{"nil tool", func(o *Options) { o.Tools = append(o.Tools, nil) }, "agent: tool 1: "},
		{"zero tool", func(o *Options) { o.Tools = []*tools.Tool{{}} }, "agent: tool 0: "},
		{"two of one name", func(o *Options) { o.Tools = append(o.Tools, echo(t, "one")) }, `agent: two tools are named "one"`},
		{"nil message", func(o *Options) { o.Messages = append(o.Messages, nil) }, "agent: Options.Messages[1] is nil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := Options{Config: loop.Config{Provider: faux.New(), Model: model}, SystemPrompt: "p", Tools: []*tools.Tool{one},
				Messages: []providers.Message{providers.NewUserText("x")}}
			a := mustNew(base)
			err := a.Configure(func(o *Options) {
				o.SystemPrompt, o.Model = "changed", providers.Model{ID: "changed"}
				c.f(o)
			})
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("Configure = %v, want an error starting %q", err, c.want)
			}
			if s := a.State(); s.SystemPrompt != "p" || s.Model != model || len(s.Tools) != 1 || len(s.Messages) != 1 {
				t.Fatalf("a refused Configure changed the agent: %+v", s)
			}
			o := base
			c.f(&o)
			if _, err := New(o); err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("New = %v, want an error starting %q", err, c.want)
			}
		})
	}
}

// TestConfigureKeepsItsOwnCopies: what f leaves is copied; changing the
// caller's lists afterwards changes nothing in the agent, and f sees a
// copy too.
func TestConfigureKeepsItsOwnCopies(t *testing.T) {
	a := mustNew(Options{Config: loop.Config{Provider: faux.New(), Model: model}, Messages: []providers.Message{providers.NewUserText("x")}})
	var kept Options
	if err := a.Configure(func(o *Options) {
		o.Messages[0] = providers.NewUserText("edited in f")
		o.Tools = append(o.Tools, echo(t, "t"))
		kept = *o
	}); err != nil {
		t.Fatal(err)
	}
	kept.Messages[0] = providers.NewUserText("after")
	kept.Tools[0] = nil
	s := a.State()
	if s.Messages[0].(providers.UserMessage).Text() != "edited in f" || s.Tools[0] == nil {
		t.Fatalf("the agent shares the caller's lists: %+v", s)
	}
}

// TestConfigureLosesToARun: a run that starts while f runs wins; the
// options f left are dropped and its transcript kept.
func TestConfigureLosesToARun(t *testing.T) {
	a := newAgent(faux.New(faux.Reply(faux.Text("a"))))
	err := a.Configure(func(o *Options) {
		o.SystemPrompt = "late"
		o.Messages = nil
		if err := a.Prompt(context.Background(), providers.NewUserText("hi")); err != nil {
			t.Error(err)
		}
	})
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("Configure after a run started = %v, want ErrBusy", err)
	}
	if s := a.State(); s.SystemPrompt != "" || roles(s.Messages) != "user,assistant" {
		t.Fatalf("the run's transcript was lost or f's options taken: %q %s", s.SystemPrompt, roles(s.Messages))
	}
}

// TestConfigureQueueModes: a mode changed by Configure governs the next
// run's queue.
func TestConfigureQueueModes(t *testing.T) {
	p := faux.New(faux.Reply(faux.Text("a")), faux.Reply(faux.Text("b")))
	a := newAgent(p)
	if err := a.Configure(func(o *Options) { o.FollowUpMode = QueueAll }); err != nil {
		t.Fatal(err)
	}
	a.FollowUps().Push(providers.NewUserText("f1"), providers.NewUserText("f2"))
	if err := a.Prompt(context.Background(), providers.NewUserText("hi")); err != nil {
		t.Fatal(err)
	}
	if got := roles(a.State().Messages); got != "user,assistant,f1,f2,assistant" {
		t.Fatalf("transcript %s", got)
	}
}

// TestPromptRefusesEmptyInput: no message, or a nil one, starts nothing.
func TestPromptRefusesEmptyInput(t *testing.T) {
	a := newAgent(faux.New(faux.Reply(faux.Text("a"))))
	var n atomic.Int64
	a.Subscribe(func(context.Context, events.Event) { n.Add(1) })
	for name, msgs := range map[string][]providers.Message{
		"none": nil,
		"nil":  {providers.NewUserText("x"), nil},
	} {
		if err := a.Prompt(context.Background(), msgs...); err == nil || !strings.HasPrefix(err.Error(), "agent: Prompt") {
			t.Errorf("%s: Prompt = %v", name, err)
		}
	}
	if n.Load() != 0 || len(a.State().Messages) != 0 {
		t.Fatalf("a refused prompt ran: %d events, %d messages", n.Load(), len(a.State().Messages))
	}
}

// TestSubscribeNil: a nil handler is ignored, and so is its unsubscribe.
func TestSubscribeNil(t *testing.T) {
	a := newAgent(faux.New(faux.Reply(faux.Text("a"))))
	unsub := a.Subscribe(nil)
	if err := a.Prompt(context.Background(), providers.NewUserText("hi")); err != nil {
		t.Fatal(err)
	}
	unsub()
	unsub()
}

// TestConfigureSurvivesItsFunction: a nil function is refused, and one
// that panics leaves the agent as it was and ready for the next Configure.
func TestConfigureSurvivesItsFunction(t *testing.T) {
	a := newAgent(faux.New())
	if err := a.Configure(nil); err == nil {
		t.Fatal("Configure(nil) accepted")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the function's panic did not reach its caller")
			}
		}()
		_ = a.Configure(func(o *Options) {
			o.SystemPrompt = "half"
			panic("mid-edit")
		})
	}()
	if a.State().SystemPrompt != "" {
		t.Fatal("a panicking function's edit was kept")
	}
	if err := a.Configure(func(o *Options) { o.SystemPrompt = "whole" }); err != nil || a.State().SystemPrompt != "whole" {
		t.Fatalf("Configure after a panic: %v, %q", err, a.State().SystemPrompt)
	}
}
