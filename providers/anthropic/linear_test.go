package anthropic

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/providers"
)

// longBlock is a kind of block streamed in many deltas: its start event
// and one delta carrying piece.
type longBlock struct {
	name  string
	start string
	delta func(piece string) string
}

var longBlocks = []longBlock{
	{"text", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		func(p string) string { return textDelta(0, p) }},
	{"thinking", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		func(p string) string {
			return fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":%q}}`, p)
		}},
	{"signature", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"hm","signature":""}}`,
		func(p string) string {
			return fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":%q}}`, p)
		}},
	{"tool input", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"write","input":{}}}`,
		func(p string) string {
			return fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":%q}}`, p)
		}},
	{"server tool input", `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
		func(p string) string {
			return fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":%q}}`, p)
		}},
	{"citations", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"","citations":[]}}`,
		func(p string) string {
			return fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","cited_text":%q,"url":"https://e.x/","title":"t","encrypted_index":"ix"}}}`, p)
		}},
}

// manyBlocks is a Messages API stream of size/chunk blocks (text, a
// server tool's call and its result in turn), each of chunk bytes.
func manyBlocks(size, chunk int, reason string) string {
	piece := strings.Repeat("a", chunk-1) + " "
	var b strings.Builder
	b.WriteString(recorded.SSE(msgStart))
	for i := range size / chunk {
		var start, delta string
		switch i % 3 {
		case 0:
			start = fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i)
			delta = textDelta(i, piece)
		case 1:
			start = fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"server_tool_use","id":"srvtoolu_%d","name":"web_search","input":{}}}`, i, i)
			delta = fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%q}}`, i, `{"query":"`+piece+`"}`)
		case 2:
			start = fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_%d","content":[{"type":"web_search_result","title":%q,"url":"https://e.x/","encrypted_content":"e"}]}}`, i, i-1, piece)
		}
		b.WriteString(recorded.SSE(start))
		if delta != "" {
			b.WriteString(recorded.SSE(delta))
		}
		b.WriteString(recorded.SSE(fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)))
	}
	b.WriteString(recorded.SSE(stopWith(reason, size/4), msgStop))
	return b.String()
}

// longStream is a Messages API stream of one block of kind k carrying
// size bytes in deltas of chunk bytes, ending with stop reason reason. A
// tool's input is one JSON object whose string value is the bytes.
func longStream(k longBlock, size, chunk int, reason string) string {
	piece := strings.Repeat("a", chunk-1) + " "
	var b strings.Builder
	b.WriteString(recorded.SSE(msgStart, k.start))
	if strings.Contains(k.name, "tool") {
		b.WriteString(recorded.SSE(k.delta(`{"content": "`)))
	}
	ev := recorded.SSE(k.delta(piece))
	b.Grow(len(ev) * (size / chunk))
	for range size / chunk {
		b.WriteString(ev)
	}
	if strings.Contains(k.name, "tool") {
		b.WriteString(recorded.SSE(k.delta(`"}`)))
	}
	b.WriteString(recorded.SSE(blockStop, stopWith(reason, size/4), msgStop))
	return b.String()
}

// serveLong answers a first request with body, and a continuation (a
// request that sends an assistant turn back) with a short answer; it
// writes in 32 KiB pieces.
func serveLong(tb testing.TB, body string) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := io.ReadAll(r.Body)
		out := body
		if strings.Contains(string(req), `"role":"assistant"`) {
			out = answer(".")
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for rest := out; len(rest) > 0; {
			k := min(32<<10, len(rest))
			_, _ = io.WriteString(w, rest[:k])
			rest = rest[k:]
		}
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// drain streams one request and returns its last event.
func drain(p *Provider) providers.StreamEvent {
	seq, _ := p.Stream(context.Background(), recorded.Hi(testModel))
	var last providers.StreamEvent
	for ev := range seq {
		last = ev
	}
	return last
}

// TestLinearCost: what a long block costs per byte does not grow with its
// length, for every kind of delta and for a turn of many blocks, each
// paused (pause_turn) and sent back: every event is read for the
// continuation, and the continuation carries the blocks. Quadratic assembly (appending to a
// string on each delta, as the SDK's accumulator does) allocates about
// size²/(2·chunk) bytes: eight times the length costs eight times as much
// per byte. The bound allows three.
func TestLinearCost(t *testing.T) {
	const chunk = 1 << 10
	const small, large = 64 << 10, 512 << 10
	const reason = "pause_turn"
	kinds := append(slices.Clone(longBlocks), longBlock{name: "many blocks"})
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			perByte := func(size int) float64 {
				body := manyBlocks(size, chunk, reason)
				if k.delta != nil {
					body = longStream(k, size, chunk, reason)
				}
				srv := serveLong(t, body)
				p := New(Options{APIKey: "k", BaseURL: srv.URL, HTTPOptions: providers.HTTPOptions{MaxRetries: -1},
					MaxContinuations: 1})
				drain(p) // warm the connection and the SDK's decoders
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				last := drain(p)
				runtime.ReadMemStats(&after)
				if last.Type != providers.StreamDone {
					t.Fatalf("%s %s %q", last.Type, last.Message.StopReason, last.Message.ErrorMessage)
				}
				return float64(after.TotalAlloc-before.TotalAlloc) / float64(size)
			}
			a, b := perByte(small), perByte(large)
			t.Logf("%.0f bytes allocated per byte at %d, %.0f at %d", a, small, b, large)
			if b > 3*a {
				t.Fatalf("%.0f bytes allocated per byte of a %d-byte block, %.0f at %d: not linear", b, large, a, small)
			}
		})
	}
}

// BenchmarkLongAnswer streams a 24 MB answer in 1 KB deltas through the
// provider from an httptest server speaking the Messages API's SSE.
func BenchmarkLongAnswer(b *testing.B) {
	const size, chunk = 24 << 20, 1 << 10
	for _, k := range longBlocks[:2] {
		b.Run(k.name, func(b *testing.B) {
			srv := serveLong(b, longStream(k, size, chunk, "end_turn"))
			p := New(Options{APIKey: "k", BaseURL: srv.URL, HTTPOptions: providers.HTTPOptions{MaxRetries: -1}})
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if last := drain(p); last.Type != providers.StreamDone || len(last.Message.Content) != 1 {
					b.Fatalf("%s %s %q", last.Type, last.Message.StopReason, last.Message.ErrorMessage)
				}
			}
		})
	}
}
