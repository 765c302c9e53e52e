package natsbus_test

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/events/natsbus"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

type envArgs struct {
	Label string `json:"label"`
}

// TestEnvelopeOverNATS: the events of a run whose parallel bodies report
// progress and one of which runs a nested run arrive with the envelopes
// they were published with (position, attempt, path), each run's numbering
// whole under events.SeqCheck, beside the bus's own sequence.
func TestEnvelopeOverNATS(t *testing.T) {
	srv := startServer(t)
	run := "run-envelope"
	pub, err := srv.connect(t).Publisher(context.Background(), run, natsbus.PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var bus events.Bus
	var mu sync.Mutex
	var sent []events.Envelope
	bus.Subscribe(func(ctx context.Context, e events.Event) {
		mu.Lock()
		sent = append(sent, events.EnvelopeOf(e))
		mu.Unlock()
		pub.Handle(ctx, e)
	})

	child := faux.New(faux.Reply(faux.Text("child says hi")))
	work := tools.Must(tools.New(tools.Config{Name: "work"}, func(ctx context.Context, a envArgs) (tools.Result, error) {
		tools.ReportProgress(ctx, tools.TextResult(a.Label+" halfway"))
		if a.Label == "nest" {
			if _, err := loop.Run(ctx, []providers.Message{providers.NewUserText("child")}, loop.Conversation{},
				loop.Config{Provider: child, Model: providers.Model{ID: "faux"}}, events.Nest(bus.Handle, tools.CallID(ctx))); err != nil {
				return tools.Result{}, err
			}
		}
		return tools.TextResult("done"), nil
	}))
	model := faux.New(
		faux.Reply(faux.Call("c1", "work", map[string]any{"label": "a"}), faux.Call("c2", "work", map[string]any{"label": "nest"})),
		faux.Reply(faux.Text("finished")))
	if _, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{Tools: []*tools.Tool{work}},
		loop.Config{Provider: model, Model: providers.Model{ID: "faux"}}, bus.Handle); err != nil {
		t.Fatal(err)
	}
	if err := pub.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	var got []events.Envelope
	var check events.SeqCheck
	var checkErr error
	done := make(chan struct{})
	sub, err := srv.connect(t).Subscribe(context.Background(), run, 1, func(seq uint64, e events.Event) {
		if err := check.Check(e); err != nil && checkErr == nil {
			checkErr = err
		}
		got = append(got, events.EnvelopeOf(e))
		if seq == pub.Seq() {
			close(done)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%d of %d events arrived", len(got), pub.Seq())
	}
	mu.Lock()
	defer mu.Unlock()
	if checkErr != nil {
		t.Fatal(checkErr)
	}
	if !reflect.DeepEqual(got, sent) {
		t.Fatalf("envelopes changed on the way:\n got %v\nsent %v", got, sent)
	}
	nested := 0
	for _, env := range got {
		if reflect.DeepEqual(env.Path, []string{"c2"}) {
			nested++
		}
	}
	if nested < 6 {
		t.Fatalf("%d nested events", nested)
	}
}
