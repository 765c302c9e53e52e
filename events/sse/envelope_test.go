package sse

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// TestEnvelopeOnThePage: the events a browser receives carry their
// envelope; the snapshot's message in flight drops the text of a
// superseded attempt; a nested run's events stream live but stay out of
// the top-level conversation the snapshot holds.
func TestEnvelopeOnThePage(t *testing.T) {
	b := New(64)
	srv := httptest.NewServer(b)
	defer srv.Close()
	defer b.Close()
	ctx := context.Background()
	own := func(n uint64) events.Envelope { return events.Envelope{Seq: events.Seq{N: n}} }
	nested := func(n uint64) events.Envelope { return events.Envelope{Seq: events.Seq{N: n}, Path: []string{"c9"}} }
	upd := func(ev providers.StreamEvent, sub uint64, attempt int) events.Event {
		return events.MessageUpdate{Envelope: events.Envelope{Seq: events.Seq{N: 3, Sub: sub}, Attempt: attempt}, Stream: ev}
	}
	first := kit.NewBuilder(providers.Model{ID: "m1"})
	start1 := first.Start()
	second := kit.NewBuilder(providers.Model{ID: "m2"})
	start2 := second.Start()
	sent := []events.Event{
		events.AgentStart{Envelope: own(1)},
		events.TurnStart{Envelope: own(2)},
		events.MessageStart{Envelope: own(3), Message: *start1.Message},
		upd(first.TextStart(), 1, 0),
		upd(first.TextDelta("half an answ"), 2, 0),
		// A child run, nested in call c9, on the same page.
		events.AgentStart{Envelope: nested(1)},
		events.MessageStart{Envelope: nested(2), Message: providers.NewUserText("child prompt")},
		events.MessageEnd{Envelope: nested(3), Message: providers.NewUserText("child prompt")},
		events.AgentEnd{Envelope: nested(4), Messages: []providers.Message{providers.NewUserText("child prompt")}},
		upd(start2, 1, 1),
		upd(second.TextStart(), 2, 1),
		upd(second.TextDelta("Whole."), 3, 1),
	}
	for _, e := range sent {
		b.Handle(ctx, e)
	}

	c := connect(t, ctx, srv.URL, "")
	if f := c.event(t); f.name != "snapshot" {
		t.Fatalf("first %+v", f)
	}
	c = connect(t, ctx, srv.URL, b.epoch+"-1")
	var check events.SeqCheck
	check.Check(sent[0])
	for i, want := range sent[1:] {
		f := c.event(t)
		got, err := events.Unmarshal([]byte(f.data))
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if !reflect.DeepEqual(events.EnvelopeOf(got), events.EnvelopeOf(want)) {
			t.Fatalf("event %d: envelope %+v, want %+v", i, events.EnvelopeOf(got), events.EnvelopeOf(want))
		}
		if err := check.Check(got); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}

	var snap struct {
		Messages  []json.RawMessage           `json:"messages"`
		Streaming *providers.AssistantMessage `json:"streaming"`
		Running   bool                        `json:"running"`
	}
	if err := json.Unmarshal(b.pending(0, true).snapshot.encode(), &snap); err != nil {
		t.Fatal(err)
	}
	if snap.Streaming == nil || snap.Streaming.Text() != "Whole." || snap.Streaming.Model != "m2" {
		t.Fatalf("streaming %+v", snap.Streaming)
	}
	if len(snap.Messages) != 0 || !snap.Running {
		t.Fatalf("the child's events entered the conversation: %d messages, running %v", len(snap.Messages), snap.Running)
	}
}
