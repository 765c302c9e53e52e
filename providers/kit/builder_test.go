package kit

import (
	"encoding/json"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/providers"
)

// BenchmarkTextDelta is one streamed text delta: the event and its
// reference to the message so far.
func BenchmarkTextDelta(b *testing.B) {
	bl := NewBuilder(providers.Model{ID: "m", API: "a", Provider: "p"})
	bl.Start()
	bl.TextStart()
	b.ReportAllocs()
	for b.Loop() {
		if ev := bl.TextDelta("x"); ev.ContentIndex != 0 {
			b.Fatal("wrong block")
		}
	}
}

// BenchmarkManyToolCalls streams a message of n tool calls whose
// arguments arrive interleaved (all open until the end, as Chat
// Completions servers send parallel calls): the cost per call is flat in
// n.
func BenchmarkManyToolCalls(b *testing.B) {
	for _, n := range []int{500, 4000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				streamCalls(n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
		})
	}
}

// streamCalls streams n interleaved tool calls through a Builder.
func streamCalls(n int) providers.StreamEvent {
	b := NewBuilder(providers.Model{ID: "m"})
	b.Start()
	for i := range n {
		b.ToolCallStart("c"+strconv.Itoa(i), "read")
	}
	for i := range n {
		b.ToolCallDeltaAt(i, `{"p":`, nil)
	}
	for i := range n {
		b.ToolCallDeltaAt(i, `"x"}`, map[string]any{"p": "x"})
		b.ToolCallEndAt(i, map[string]any{"p": "x"}, true)
	}
	return b.Done(providers.StopReasonToolUse, providers.Usage{})
}

// TestStreamCostIsLinear: the bytes allocated to stream a message of n
// tool calls grow linearly in n. (When every event copied the message's
// block list, 8 times the calls allocated over 60 times the bytes.)
func TestStreamCostIsLinear(t *testing.T) {
	alloc := func(n int) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if ev := streamCalls(n); len(ev.Message.Content) != n {
			t.Fatalf("%d blocks, want %d", len(ev.Message.Content), n)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(500), alloc(4000)
	if ratio := float64(large) / float64(small); ratio > 12 {
		t.Fatalf("500 calls allocated %d bytes, 4000 calls %d: %.1f times as much, want about 8", small, large, ratio)
	}
}

// TestPartialsAreImmutableWhileInterleaving: with calls open side by side
// each event's partial message stays as it was at that event, whenever it
// is put together and on whichever goroutine.
func TestPartialsAreImmutableWhileInterleaving(t *testing.T) {
	b := NewBuilder(providers.Model{ID: "m"})
	var evs []providers.StreamEvent
	var want []string
	add := func(e providers.StreamEvent) {
		evs = append(evs, e)
		raw, _ := json.Marshal(e.Partial())
		want = append(want, string(raw))
	}
	add(b.Start())
	add(b.ThinkingDelta("hm"))
	add(b.ThinkingEnd("sig"))
	add(b.ToolCallStart("a", "read"))
	add(b.ToolCallStart("b", "read"))
	var wg sync.WaitGroup
	check := func(evs []providers.StreamEvent, want []string) {
		defer wg.Done()
		for i, e := range evs {
			if raw, _ := json.Marshal(e.Partial()); string(raw) != want[i] {
				t.Errorf("partial %d changed: %s, was %s", i, raw, want[i])
			}
		}
	}
	for i := range 50 {
		add(b.ToolCallDeltaAt(3+i%2, `{"p":`, map[string]any{}))
		if i%10 == 0 {
			wg.Add(1)
			go check(evs[:len(evs):len(evs)], want[:len(want):len(want)]) // reads while the stream goes on
		}
	}
	add(b.ToolCallEndAt(4, map[string]any{}, false))
	add(b.TextDelta("done"))
	add(b.Done(providers.StopReasonToolUse, providers.Usage{}))
	wg.Add(1)
	check(evs, want)
	wg.Wait()
	if th := evs[2].Partial().Content[0].(providers.Thinking); th.Signature != "sig" || th.Thinking != "hm" {
		t.Fatalf("thinking at its end: %+v", th)
	}
	if n := len(evs[len(evs)-2].Partial().Content); n != 4 {
		t.Fatalf("%d blocks before done, want 4", n)
	}
}

// TestBuilderSnapshotsAreImmutable: every event's snapshot stays as it was
// when the event was made.
func TestBuilderSnapshotsAreImmutable(t *testing.T) {
	b := NewBuilder(providers.Model{ID: "m"})
	var evs []providers.StreamEvent
	var want []string
	add := func(e providers.StreamEvent) {
		evs = append(evs, e)
		raw, _ := json.Marshal(e.Partial())
		want = append(want, string(raw))
	}
	add(b.Start())
	add(b.TextStart())
	for range 100 {
		add(b.TextDelta("ab"))
	}
	add(b.TextEnd())
	add(b.ToolCallStart("c1", "read"))
	add(b.ToolCallDelta(`{"p":`, map[string]any{}))
	add(b.ToolCallDelta(`"x"}`, map[string]any{"p": "x"}))
	add(b.ToolCallEnd(map[string]any{"p": "x"}, true))
	add(b.Done(providers.StopReasonToolUse, providers.Usage{Output: 3}))
	for i, e := range evs {
		raw, _ := json.Marshal(e.Partial())
		if string(raw) != want[i] {
			t.Fatalf("snapshot %d changed", i)
		}
	}
	final := evs[len(evs)-1].Message
	if final.Text() != strings.Repeat("ab", 100) || final.ToolCalls()[0].RawArguments != `{"p":"x"}` || final.StopReason != providers.StopReasonToolUse {
		t.Fatalf("final %+v", final)
	}
	if evs[102].Type != providers.StreamTextEnd || evs[102].Content != strings.Repeat("ab", 100) {
		t.Fatalf("text_end %+v", evs[102])
	}
}

func TestBuilderFailKeepsPartial(t *testing.T) {
	b := NewBuilder(providers.Model{})
	b.Start()
	b.ToolCallStart("c1", "x")
	b.ToolCallDelta(`{"a":`, nil)
	e := b.Fail(providers.StopReasonError, "connection reset", providers.Usage{})
	tc := e.Message.ToolCalls()[0]
	if !tc.Incomplete || tc.RawArguments != `{"a":` || e.Message.ErrorMessage != "connection reset" {
		t.Fatalf("failed message %+v", e.Message)
	}
}

// TestForRequestStampsTheCallersClock: a response is stamped with the
// request's Time, the caller's clock, in every snapshot and in the final
// message; a zero Time is the wall clock.
func TestForRequestStampsTheCallersClock(t *testing.T) {
	at := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	tests := []struct {
		name string
		time time.Time
	}{{"the caller's clock", at}, {"the wall clock", time.Time{}}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now().UnixMilli()
			b := ForRequest(&providers.Request{Model: providers.Model{ID: "m", API: "a", Provider: "p"}, Time: tt.time})
			start := b.Start()
			b.TextDelta("hi")
			stamps := []int64{start.Message.Timestamp, b.Snapshot().Timestamp}
			final := b.Done(providers.StopReasonStop, providers.Usage{})
			stamps = append(stamps, final.Message.Timestamp)
			for _, ts := range stamps {
				if !tt.time.IsZero() && ts != at.UnixMilli() || tt.time.IsZero() && ts < before {
					t.Fatalf("stamped %v, want %v (0: the wall clock, from %d)", stamps, tt.time, before)
				}
			}
			if final.Message.Model != "m" || final.Message.API != "a" || final.Message.Provider != "p" {
				t.Fatalf("header %+v, want the request's model", final.Message)
			}
		})
	}
}
