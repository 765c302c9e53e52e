package events

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// allEvents is one event of every type.
func allEvents() []Event {
	return append(sampleEvents(),
		ToolsChanged{Tools: []string{"a", "b"}, Added: []string{"b"}},
		Compacted{Strategy: "trim", Before: 10, After: 5, Dropped: 2})
}

// TestEveryTypeHasAnEnvelope: WithEnvelope sets the envelope of an event
// of each of the twelve types, EnvelopeOf reads it back, and the event
// given is not changed.
func TestEveryTypeHasAnEnvelope(t *testing.T) {
	env := Envelope{Seq: Seq{N: 7, Sub: 3}, Path: []string{"c1", "c2"}, Attempt: 2}
	seen := map[Type]bool{}
	for _, e := range allEvents() {
		seen[e.Type()] = true
		got := WithEnvelope(e, env)
		if got.Type() != e.Type() || !reflect.DeepEqual(EnvelopeOf(got), env) {
			t.Fatalf("%s: %+v", e.Type(), EnvelopeOf(got))
		}
		if !reflect.DeepEqual(EnvelopeOf(e), Envelope{}) {
			t.Fatalf("%s: the original changed", e.Type())
		}
	}
	if len(seen) != 12 {
		t.Fatalf("%d types, want 12", len(seen))
	}
	if WithEnvelope(nil, env) != nil || !reflect.DeepEqual(EnvelopeOf(nil), Envelope{}) {
		t.Fatal("nil event")
	}
}

// TestWireV2RoundTrip: every event type, with each part of the envelope
// set, comes back from MarshalWire with the same envelope and the same
// reference JSON; Marshal (the reference's form) leaves the envelope out.
func TestWireV2RoundTrip(t *testing.T) {
	envs := []Envelope{
		{},
		{Seq: Seq{N: 1}},
		{Seq: Seq{N: 42, Sub: 9}, Attempt: 3},
		{Seq: Seq{N: 5}, Path: []string{"call_1"}},
		{Seq: Seq{N: 1 << 60, Sub: 1 << 60}, Path: []string{"a", "b", "c"}, Attempt: 1},
	}
	for _, e := range allEvents() {
		for _, env := range envs {
			in := WithEnvelope(e, env)
			raw, err := MarshalWire(in)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(raw), `"v":2`) {
				t.Fatalf("%s: no version: %s", e.Type(), raw)
			}
			back, err := Unmarshal(raw)
			if err != nil {
				t.Fatalf("%s: %v\n%s", e.Type(), err, raw)
			}
			if got := EnvelopeOf(back); !reflect.DeepEqual(got, env) {
				t.Fatalf("%s: envelope %+v, want %+v\n%s", e.Type(), got, env, raw)
			}
			if e.Type() == TypeMessageUpdate {
				continue // the wire form carries only the change
			}
			want, _ := Marshal(e)
			got, _ := Marshal(back)
			if string(got) != string(want) {
				t.Fatalf("%s: event changed:\n got %s\nwant %s", e.Type(), got, want)
			}
			if ref, _ := Marshal(in); strings.Contains(string(ref), `"seq":`) || strings.Contains(string(ref), `"path":[`) {
				t.Fatalf("%s: the reference form carries the envelope: %s", e.Type(), ref)
			}
		}
	}
}

// TestWireVersions: version 1 (and the reference's unversioned JSON) still
// decode, with the zero envelope; an envelope claimed by version 1, an
// unknown version and a negative attempt are refused with errors naming
// them.
func TestWireVersions(t *testing.T) {
	ok := []string{
		`{"type":"turn_start"}`,
		`{"type":"turn_start","v":1}`,
		`{"type":"tool_execution_start","v":1,"toolCallId":"c1","toolName":"read","args":{}}`,
		`{"type":"message_update","v":1,"assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"hi"}}`,
		`{"type":"turn_start","v":2}`,
		`{"type":"turn_start","v":2,"seq":3,"path":["c1"]}`,
	}
	for _, raw := range ok {
		e, err := Unmarshal([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if strings.Contains(raw, `"v":1`) && !reflect.DeepEqual(EnvelopeOf(e), Envelope{}) {
			t.Fatalf("%s: envelope %+v", raw, EnvelopeOf(e))
		}
	}
	bad := []struct{ raw, want string }{
		{`{"type":"turn_start","v":3}`, "wire version 3"},
		{`{"type":"turn_start","v":-1}`, "wire version -1"},
		{`{"type":"turn_start","v":1,"seq":3}`, "in wire version 1"},
		{`{"type":"turn_start","seq":3}`, "in wire version 0"},
		{`{"type":"turn_start","v":1,"path":["x"]}`, "in wire version 1"},
		{`{"type":"message_update","v":2,"attempt":-1,"assistantMessageEvent":{"type":"start"}}`, "negative attempt"},
		{`{"type":"turn_start","v":2,"seq":-1}`, "event: json"},
		{`{"type":"turn_start","v":2,"path":"c1"}`, "event: json"},
	}
	for _, b := range bad {
		_, err := Unmarshal([]byte(b.raw))
		if err == nil || !strings.Contains(err.Error(), b.want) || !strings.HasPrefix(err.Error(), "event") {
			t.Fatalf("%s: %v, want an error with %q", b.raw, err, b.want)
		}
		if unknown := strings.HasPrefix(b.want, "wire version"); errors.Is(err, ErrUnknown) != unknown {
			t.Fatalf("%s: %v: ErrUnknown %v, want %v", b.raw, err, !unknown, unknown)
		}
	}
	// A type of a newer version is unknown too, and says so.
	if _, err := Unmarshal([]byte(`{"type":"approval_requested","v":2}`)); !errors.Is(err, ErrUnknown) {
		t.Fatalf("a newer type: %v", err)
	}
}

// TestNest: a handler made by Nest puts its call id in front of the path,
// keeps the rest of the envelope and the event, and nests.
func TestNest(t *testing.T) {
	var got []Event
	top := func(_ context.Context, e Event) { got = append(got, e) }
	child := Nest(top, "call_1")
	grandchild := Nest(child, "call_7")
	child(context.Background(), ToolExecutionStart{Envelope: Envelope{Seq: Seq{N: 4}}, ToolCallID: "call_7"})
	grandchild(context.Background(), MessageUpdate{Envelope: Envelope{Seq: Seq{N: 2, Sub: 5}, Attempt: 1}})
	grandchild(context.Background(), nil)
	if len(got) != 2 {
		t.Fatalf("%d events", len(got))
	}
	if env := EnvelopeOf(got[0]); !reflect.DeepEqual(env, Envelope{Seq: Seq{N: 4}, Path: []string{"call_1"}}) ||
		got[0].(ToolExecutionStart).ToolCallID != "call_7" {
		t.Fatalf("child: %+v", got[0])
	}
	if env := EnvelopeOf(got[1]); !reflect.DeepEqual(env, Envelope{Seq: Seq{N: 2, Sub: 5}, Attempt: 1, Path: []string{"call_1", "call_7"}}) {
		t.Fatalf("grandchild: %+v", env)
	}
	Nest(nil, "x")(context.Background(), TurnStart{}) // a nil parent drops the events
}

// TestNestOnABus: a parent's and a nested run's events, published on one
// Bus, are told apart by their paths, and each run's sequence checks out
// on its own.
func TestNestOnABus(t *testing.T) {
	var bus Bus
	var check SeqCheck
	var errs []error
	var paths []string
	bus.Subscribe(func(_ context.Context, e Event) {
		if err := check.Check(e); err != nil {
			errs = append(errs, err)
		}
		paths = append(paths, strings.Join(EnvelopeOf(e).Path, ">"))
	})
	ctx := context.Background()
	child := Nest(bus.Handle, "call_1")
	at := func(n uint64) Envelope { return Envelope{Seq: Seq{N: n}} }
	bus.Handle(ctx, AgentStart{Envelope: at(1)})
	bus.Handle(ctx, ToolExecutionStart{Envelope: at(2), ToolCallID: "call_1"})
	child(ctx, AgentStart{Envelope: at(1)}) // the child numbers from 1 too
	child(ctx, TurnStart{Envelope: at(2)})
	bus.Handle(ctx, ToolExecutionUpdate{Envelope: Envelope{Seq: Seq{N: 2, Sub: 1}}, ToolCallID: "call_1"})
	child(ctx, AgentEnd{Envelope: at(3)})
	bus.Handle(ctx, ToolExecutionEnd{Envelope: at(3), ToolCallID: "call_1"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if want := []string{"", "", "call_1", "call_1", "", "call_1", ""}; !reflect.DeepEqual(paths, want) {
		t.Fatalf("paths %q", paths)
	}
}

// TestSeqCheck: the gap rule, event by event.
func TestSeqCheck(t *testing.T) {
	own := func(e Event, n uint64) Event { return WithEnvelope(e, Envelope{Seq: Seq{N: n}}) }
	in := func(e Event, n, sub uint64, attempt int) Event {
		return WithEnvelope(e, Envelope{Seq: Seq{N: n, Sub: sub}, Attempt: attempt})
	}
	upd := MessageUpdate{}
	tu := ToolExecutionUpdate{ToolCallID: "c1"}
	prefix := []Event{own(AgentStart{}, 1), own(TurnStart{}, 2), own(MessageStart{}, 3)}
	cases := []struct {
		name string
		evs  []Event
		want string // "" for no error; else in the error of the last event
	}{
		{"whole", append(prefix, in(upd, 3, 1, 0), in(upd, 3, 2, 0), own(MessageEnd{}, 4)), ""},
		{"own gap", append(prefix, own(MessageEnd{}, 5)), "message_end event 5 after 3"},
		{"own repeat", append(prefix, own(MessageEnd{}, 3)), "event 3 after 3"},
		{"first not 1", []Event{own(AgentStart{}, 2)}, "event 2 after 0"},
		{"no position", []Event{AgentStart{}}, "event 0 after 0"},
		{"sub gap", append(prefix, in(upd, 3, 1, 0), in(upd, 3, 3, 0)), "3.3 after 3.1"},
		{"sub repeat", append(prefix, in(upd, 3, 1, 0), in(upd, 3, 1, 0)), "3.1 after 3.1"},
		{"sub first not 1", append(prefix, in(upd, 3, 2, 0)), "3.2 after 3.0"},
		{"stream not open", append(prefix, in(upd, 2, 1, 0)), "2.1 of a stream not open"},
		{"stream closed", append(prefix, in(upd, 3, 1, 0), own(MessageEnd{}, 4), in(upd, 3, 2, 0)), "not open"},
		{"new attempt restarts", append(prefix, in(upd, 3, 1, 0), in(upd, 3, 2, 0), in(upd, 3, 1, 1), in(upd, 3, 2, 1)), ""},
		{"new attempt gap", append(prefix, in(upd, 3, 1, 0), in(upd, 3, 2, 1)), "3.2 after 3.0"},
		{"stale attempt", append(prefix, in(upd, 3, 1, 1), in(upd, 3, 2, 0)), "attempt 0 after attempt 1"},
		{"tool streams interleave", []Event{own(AgentStart{}, 1), own(ToolExecutionStart{ToolCallID: "c1"}, 2),
			own(ToolExecutionStart{ToolCallID: "c2"}, 3), in(tu, 3, 1, 0), in(tu, 2, 1, 0), own(ToolExecutionEnd{ToolCallID: "c2"}, 4),
			in(tu, 2, 2, 0), own(ToolExecutionEnd{ToolCallID: "c1"}, 5)}, ""},
		{"tool update after its end", []Event{own(AgentStart{}, 1), own(ToolExecutionStart{ToolCallID: "c1"}, 2),
			own(ToolExecutionEnd{ToolCallID: "c1"}, 3), in(tu, 2, 1, 0)}, "not open"},
		{"next run", append(prefix, own(MessageEnd{}, 4), own(AgentEnd{}, 5), own(AgentStart{}, 1), own(TurnStart{}, 2)), ""},
		{"next run must start at 1", append(prefix, own(MessageEnd{}, 4), own(AgentEnd{}, 5), own(AgentStart{}, 2)), "agent_start event 2 after 0"},
		{"a restart drops open streams", append(prefix, own(AgentStart{}, 1), in(upd, 3, 1, 0)), "not open"},
		{"an empty id is a path of its own", []Event{own(AgentStart{}, 1), WithEnvelope(AgentStart{}, Envelope{Seq: Seq{N: 1}, Path: []string{""}}),
			own(TurnStart{}, 2)}, ""},
		{"ids are not joined", []Event{WithEnvelope(AgentStart{}, Envelope{Seq: Seq{N: 1}, Path: []string{"a", "b"}}),
			WithEnvelope(TurnStart{}, Envelope{Seq: Seq{N: 2}, Path: []string{"a\x00b"}})}, "turn_start event 2 after 0"},
		{"paths apart", []Event{own(AgentStart{}, 1), WithEnvelope(AgentStart{}, Envelope{Seq: Seq{N: 1}, Path: []string{"c"}}),
			WithEnvelope(TurnStart{}, Envelope{Seq: Seq{N: 3}, Path: []string{"c"}})}, "run at c: turn_start event 3 after 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s SeqCheck
			for i, e := range c.evs {
				err := s.Check(e)
				last := i == len(c.evs)-1
				switch {
				case !last && err != nil:
					t.Fatalf("event %d: %v", i, err)
				case last && c.want == "" && err != nil:
					t.Fatalf("last: %v", err)
				case last && c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
					t.Fatalf("last: %v, want %q", err, c.want)
				}
			}
		})
	}
}

// TestSeqCheckIsBounded: runs and streams followed at once stop at
// MaxOpen with an error naming it; ended ones are forgotten, so a long bus
// of short nested runs and calls never reaches it.
func TestSeqCheckIsBounded(t *testing.T) {
	c := SeqCheck{MaxOpen: 3}
	at := func(e Event, n uint64, path ...string) Event {
		return WithEnvelope(e, Envelope{Seq: Seq{N: n}, Path: path})
	}
	for i := range 1000 { // each nested run ends: nothing stays open
		id := string(rune('a' + i%26))
		for j, e := range []Event{at(AgentStart{}, 1, id), at(ToolExecutionStart{ToolCallID: "x"}, 2, id),
			at(ToolExecutionEnd{ToolCallID: "x"}, 3, id), at(AgentEnd{}, 4, id)} {
			if err := c.Check(e); err != nil {
				t.Fatalf("run %d, event %d: %v", i, j, err)
			}
		}
	}
	if c.open != 0 || len(c.runs) != 0 {
		t.Fatalf("%d open, %d runs after every run ended", c.open, len(c.runs))
	}
	for i, e := range []Event{at(AgentStart{}, 1), at(ToolExecutionStart{ToolCallID: "a"}, 2), at(ToolExecutionStart{ToolCallID: "b"}, 3)} {
		if err := c.Check(e); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	err := c.Check(at(ToolExecutionStart{ToolCallID: "c"}, 4))
	if err == nil || !strings.Contains(err.Error(), "more than 3 runs and streams open at once (SeqCheck.MaxOpen)") {
		t.Fatalf("past MaxOpen: %v", err)
	}
	if err := c.Check(at(AgentStart{}, 1, "other")); err == nil {
		t.Fatal("a new path past MaxOpen was followed")
	}
	if err := c.Check(at(ToolExecutionEnd{ToolCallID: "a"}, 4)); err != nil {
		t.Fatalf("the refused event was noted: %v", err)
	}
	if err := c.Check(at(ToolExecutionStart{ToolCallID: "c"}, 5)); err != nil {
		t.Fatalf("room again after an end: %v", err)
	}
}

// TestAssemblerDropsASupersededAttempt: when updates of a later attempt
// arrive, the partial text of the earlier one is gone from the message in
// flight, in process and from the wire; the new attempt's start names the
// model that now answers; a stale update of the old attempt is ignored.
func TestAssemblerDropsASupersededAttempt(t *testing.T) {
	first := kit.NewBuilder(providers.Model{ID: "m1", Provider: "p1"})
	start1 := first.Start()
	first.TextStart()
	d1 := first.TextDelta("half an answ")
	second := kit.NewBuilder(providers.Model{ID: "m2", Provider: "p2"})
	start2 := second.Start()
	t2 := second.TextStart()
	d2 := second.TextDelta("A whole answer.")

	at := func(ev providers.StreamEvent, sub uint64, attempt int) Event {
		return MessageUpdate{Envelope: Envelope{Seq: Seq{N: 3, Sub: sub}, Attempt: attempt}, Stream: ev}
	}
	evs := []Event{
		MessageStart{Envelope: Envelope{Seq: Seq{N: 3}}, Message: *start1.Message},
		at(first.TextStart(), 1, 0), at(d1, 2, 0),
		at(start2, 1, 1), at(t2, 2, 1), at(d2, 3, 1),
		at(first.TextDelta("er"), 3, 0), // stale
	}
	for _, wire := range []bool{false, true} {
		var a Assembler
		var check SeqCheck
		check.Check(AgentStart{Envelope: Envelope{Seq: Seq{N: 1}}})
		check.Check(TurnStart{Envelope: Envelope{Seq: Seq{N: 2}}})
		for i, e := range evs {
			if wire {
				raw, err := MarshalWire(e)
				if err != nil {
					t.Fatal(err)
				}
				if e, err = Unmarshal(raw); err != nil {
					t.Fatal(err)
				}
			}
			err := check.Check(e)
			if stale := i == len(evs)-1; stale != (err != nil) {
				t.Fatalf("wire %v, event %d: check %v", wire, i, err)
			}
			a.Add(e)
			if i == 2 && a.Message().Text() != "half an answ" {
				t.Fatalf("first attempt: %q", a.Message().Text())
			}
			if i == 3 && (a.Message().Text() != "" || a.Message().Model != "m2") {
				t.Fatalf("wire %v: the new attempt kept %q (model %s)", wire, a.Message().Text(), a.Message().Model)
			}
		}
		if m := a.Message(); m.Text() != "A whole answer." || m.Model != "m2" || m.Provider != "p2" {
			t.Fatalf("wire %v: %q from %s/%s", wire, m.Text(), m.Provider, m.Model)
		}
		if p := a.Latest().Partial(); p == nil || p.Text() != "A whole answer." {
			t.Fatalf("wire %v: latest %+v", wire, p)
		}
	}

	// A later attempt with no start of its own begins again from the
	// message_start's model.
	var a Assembler
	a.Add(evs[0])
	a.Add(evs[1])
	a.Add(evs[2])
	a.Add(at(first.TextStart(), 1, 1))
	a.Add(at(first.TextDelta("again"), 2, 1))
	if m := a.Message(); m.Text() != "again" || m.Model != "m1" {
		t.Fatalf("%q from %s", m.Text(), m.Model)
	}
}

// TestAssemblerFollowsOnePath: a nested run's message on the same bus
// neither resets nor feeds the top-level Assembler; one with the child's
// Path assembles the child's message and ignores the parent's.
func TestAssemblerFollowsOnePath(t *testing.T) {
	parent := kit.NewBuilder(providers.Model{ID: "parent"})
	child := kit.NewBuilder(providers.Model{ID: "child"})
	kid := func(e Event, n, sub uint64) Event {
		return WithEnvelope(e, Envelope{Seq: Seq{N: n, Sub: sub}, Path: []string{"c9"}})
	}
	evs := []Event{
		MessageStart{Message: *parent.Start().Message},
		MessageUpdate{Stream: parent.TextStart()},
		MessageUpdate{Stream: parent.TextDelta("parent text")},
		kid(MessageStart{Message: *child.Start().Message}, 1, 0),
		kid(MessageUpdate{Stream: child.TextStart()}, 1, 1),
		kid(MessageUpdate{Stream: child.TextDelta("child text")}, 1, 2),
		kid(MessageEnd{Message: *child.Snapshot()}, 2, 0),
		MessageUpdate{Stream: parent.TextDelta(", more")},
	}
	top, nested := Assembler{}, Assembler{Path: []string{"c9"}}
	for i, e := range evs {
		top.Add(e)
		nested.Add(e)
		if i == 5 && nested.Message().Text() != "child text" {
			t.Fatalf("child: %q", nested.Message().Text())
		}
	}
	if m := top.Message(); m == nil || m.Text() != "parent text, more" || m.Model != "parent" {
		t.Fatalf("top: %+v", m)
	}
	if nested.Message() != nil {
		t.Fatal("the child's message_end did not close its message")
	}
}
