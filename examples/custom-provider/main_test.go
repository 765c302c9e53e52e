package main

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop/providers"
)

func TestReverser(t *testing.T) {
	p := Reverser{}
	seq, err := p.Stream(context.Background(), &providers.Request{Model: p.Model("r"), Messages: []providers.Message{providers.NewUserText("a b c")}})
	if err != nil {
		t.Fatal(err)
	}
	var last providers.StreamEvent
	for e := range seq {
		last = e
	}
	if last.Type != providers.StreamDone || last.Message.Text() != "c b a" || last.Message.API != API {
		t.Fatalf("%s %q %q", last.Type, last.Message.Text(), last.Message.API)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	seq, _ = p.Stream(ctx, &providers.Request{Model: p.Model("r"), Messages: []providers.Message{providers.NewUserText("a b")}})
	for e := range seq {
		last = e
	}
	if last.Reason != providers.StopReasonAborted {
		t.Fatalf("cancelled: %s", last.Reason)
	}
}

// TestReverserRefusesModels: a Model no server could serve is refused
// before anything streams.
func TestReverserRefusesModels(t *testing.T) {
	for _, m := range []providers.Model{{}, {ID: "claude", API: "anthropic-messages"}} {
		if _, err := (Reverser{}).Stream(context.Background(), &providers.Request{Model: m}); err == nil {
			t.Errorf("%+v: accepted", m)
		}
	}
}
