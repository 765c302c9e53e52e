package compact

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
)

// TestSummaryNoteCounts: the note says "1 message", never "1 messages".
func TestSummaryNoteCounts(t *testing.T) {
	tests := []struct {
		name string
		msgs []providers.Message
		want string
	}{
		{"one", []providers.Message{
			providers.NewUserText(strings.Repeat("long question ", 300)),
			faux.Reply(faux.Text("a")), providers.NewUserText("b"), faux.Reply(faux.Text("c")), providers.NewUserText("d"),
		}, "1 message summarised in 7 characters"},
		{"many", many(12), "10 messages summarised in 7 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := loop.CompactInput{Transcript: tt.msgs, Provider: faux.New(faux.Reply(faux.Text("summary"))), Model: providers.Model{ID: "m"}}
			out, err := Summarize{Window: 1000 * (1 + len(tt.msgs)/10)}.Compact(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if out.Event == nil || out.Event.Note != tt.want {
				t.Fatalf("event %+v, want the note %q", out.Event, tt.want)
			}
		})
	}
}

// many is n exchanges of about 100 tokens each way.
func many(n int) []providers.Message {
	var msgs []providers.Message
	for range n {
		msgs = append(msgs, providers.NewUserText(strings.Repeat("tell me more ", 30)), faux.Reply(faux.Text(strings.Repeat("here is more ", 30))))
	}
	return msgs
}

// TestSummaryOnTheRunsClock: a summary is stamped with the run's clock
// (CompactInput.Now), and its own request carries it, so the provider
// stamps the reply with it too; a zero Now is the wall clock.
func TestSummaryOnTheRunsClock(t *testing.T) {
	at := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	for _, now := range []time.Time{at, {}} {
		model := faux.New(faux.Reply(faux.Text("summary")))
		in := loop.CompactInput{Transcript: many(12), Provider: model, Model: providers.Model{ID: "m"}, Now: now}
		before := time.Now().UnixMilli()
		out, err := Summarize{Window: 2000}.Compact(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := out.Store.(providers.SummaryMessage)
		if !ok {
			t.Fatalf("stored %T, want a summary", out.Store)
		}
		reqs := model.Requests()
		if len(reqs) != 1 || !reqs[0].Time.Equal(now) {
			t.Fatalf("the summary's request carried %v, want %v", reqs, now)
		}
		switch {
		case !now.IsZero() && s.Timestamp != at.UnixMilli():
			t.Fatalf("stamped %d, want the run's clock %d", s.Timestamp, at.UnixMilli())
		case now.IsZero() && s.Timestamp < before:
			t.Fatalf("stamped %d, before the wall clock's %d", s.Timestamp, before)
		}
	}
}
