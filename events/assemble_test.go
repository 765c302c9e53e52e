package events

import (
	"reflect"
	"testing"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// TestAssemblerLatest: Latest's Partial is the message Message gives, at
// every step of a streamed message, and an earlier Latest still gives the
// message as it stood then after the Assembler moved on; between messages
// it is nil.
func TestAssemblerLatest(t *testing.T) {
	b := kit.NewBuilder(providers.Model{ID: "m", Provider: "p"})
	start := b.Start()
	call := b.ToolCallStart("c1", "read")
	evs := []providers.StreamEvent{b.ThinkingDelta("hm"), b.ThinkingEnd("sig"), b.TextStart(), b.TextDelta("Hel"), b.TextDelta("lo"),
		b.TextEnd(), call, b.ToolCallDeltaAt(call.ContentIndex, `{"p":`, nil), b.ToolCallDeltaAt(call.ContentIndex, `1}`, nil),
		b.ToolCallEndAt(call.ContentIndex, map[string]any{"p": 1.0}, true)}

	var a Assembler
	if a.Latest().Partial() != nil {
		t.Fatal("a message before message_start")
	}
	a.Add(MessageStart{Message: *start.Message})
	type kept struct {
		ev   providers.StreamEvent
		want *providers.AssistantMessage
	}
	var earlier []kept
	for _, ev := range evs {
		a.Add(MessageUpdate{Stream: ev})
		got, want := a.Latest().Partial(), a.Message()
		got.Timestamp, want.Timestamp = 0, 0
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("after %s:\n got %+v\nwant %+v", ev.Type, got, want)
		}
		earlier = append(earlier, kept{a.Latest(), want})
	}
	for i, k := range earlier {
		got := k.ev.Partial()
		got.Timestamp = 0
		if !reflect.DeepEqual(got, k.want) {
			t.Fatalf("step %d changed:\n got %+v\nwant %+v", i, got, k.want)
		}
	}
	a.Add(MessageEnd{Message: *a.Message()})
	if a.Latest().Partial() != nil {
		t.Fatal("a message after message_end")
	}
}
