package compact

import (
	"context"
	"strings"
	"testing"

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
