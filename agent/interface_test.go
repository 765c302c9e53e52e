package agent

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
)

// TestInterface: an agent driven only through Interface runs a prompt with
// a queued follow-up, then another prompt; its subscriber sees every event
// numbered without a gap (each run numbered from 1) and the state holds
// the three answers.
func TestInterface(t *testing.T) {
	var ag Interface = newAgent(faux.New(faux.Reply(faux.Text("one")), faux.Reply(faux.Text("two")), faux.Reply(faux.Text("three"))))
	var check events.SeqCheck
	var errs []error
	n := 0
	unsubscribe := ag.Subscribe(func(_ context.Context, e events.Event) {
		n++
		if err := check.Check(e); err != nil {
			errs = append(errs, err)
		}
	})
	defer unsubscribe()
	ag.FollowUps().Push(providers.NewUserText("and then?"))
	if err := ag.Prompt(context.Background(), providers.NewUserText("go")); err != nil {
		t.Fatal(err)
	}
	if err := ag.Prompt(context.Background(), providers.NewUserText("again")); err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 || n < 20 {
		t.Fatalf("%d events: %v", n, errs)
	}
	msgs := ag.State().Messages
	if got := msgs[len(msgs)-1].(providers.AssistantMessage).Text(); len(msgs) != 6 || got != "three" {
		t.Fatalf("%d messages, last %q", len(msgs), got)
	}
	ag.Abort() // nothing active: nothing happens
	ag.Steering().Push()
}
