package main

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop/providers"
)

func TestReverser(t *testing.T) {
	seq, _ := Reverser{}.Stream(context.Background(), &providers.Request{Messages: []providers.Message{providers.NewUserText("a b c")}})
	var last providers.StreamEvent
	for e := range seq {
		last = e
	}
	if last.Type != providers.StreamDone || last.Message.Text() != "c b a" {
		t.Fatalf("%s %q", last.Type, last.Message.Text())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	seq, _ = Reverser{}.Stream(ctx, &providers.Request{Messages: []providers.Message{providers.NewUserText("a b")}})
	for e := range seq {
		last = e
	}
	if last.Reason != providers.StopReasonAborted {
		t.Fatalf("cancelled: %s", last.Reason)
	}
}
