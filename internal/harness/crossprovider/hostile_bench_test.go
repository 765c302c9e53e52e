package crossprovider

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/harness/heapwatch"
	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/anthropic"
	"github.com/agentloop/agentloop/providers/gemini"
	"github.com/agentloop/agentloop/providers/openai"
)

// hostileWire is one provider, its model, and how its server frames an
// event and refuses a request.
type hostileWire struct {
	name  string
	model providers.Model
	new   func(t testing.TB, url, key string, o providers.HTTPOptions) providers.Provider
	// head opens an event of the wire (its event line, if the wire names
	// its events); errorEvent is the wire's error event quoting msg (a
	// JSON string's contents); refusal is the body of an HTTP 401 quoting
	// msg.
	head       string
	errorEvent func(msg string) string
	refusal    func(msg string) string
	// ping is an event that changes nothing (a keep-alive with data).
	ping string
}

var hostileWires = []hostileWire{
	{
		name:  "chat",
		model: providers.Model{ID: "gpt-chat", API: "openai-completions", Provider: "openai"},
		new: func(t testing.TB, url, key string, o providers.HTTPOptions) providers.Provider {
			return openai.New(openai.Options{APIKey: key, BaseURL: url, HTTPOptions: o})
		},
		errorEvent: func(msg string) string { return `data: {"error":{"message":"` + msg + `"}}` + "\n\n" },
		refusal:    func(msg string) string { return `{"error":{"message":"` + msg + `","type":"invalid_request_error"}}` },
		ping:       `data: {"choices":[]}` + "\n\n",
	},
	{
		name:  "responses",
		model: providers.Model{ID: "gpt-resp", API: "openai-responses", Provider: "openai"},
		new: func(t testing.TB, url, key string, o providers.HTTPOptions) providers.Provider {
			return openai.NewResponses(openai.Options{APIKey: key, BaseURL: url, HTTPOptions: o})
		},
		head: "event: response.output_text.delta\n",
		errorEvent: func(msg string) string {
			return "event: error\n" + `data: {"type":"error","code":"server_error","message":"` + msg + `"}` + "\n\n"
		},
		refusal: func(msg string) string { return `{"error":{"message":"` + msg + `","type":"invalid_request_error"}}` },
		ping:    "event: response.in_progress\n" + `data: {"type":"response.in_progress"}` + "\n\n",
	},
	{
		name:  "anthropic",
		model: providers.Model{ID: "claude-x", API: anthropic.API, Provider: "anthropic"},
		new: func(t testing.TB, url, key string, o providers.HTTPOptions) providers.Provider {
			return anthropic.New(anthropic.Options{APIKey: key, BaseURL: url, HTTPOptions: o})
		},
		head: "event: content_block_delta\n",
		errorEvent: func(msg string) string {
			return "event: error\n" + `data: {"type":"error","error":{"type":"overloaded_error","message":"` + msg + `"}}` + "\n\n"
		},
		refusal: func(msg string) string {
			return `{"type":"error","error":{"type":"authentication_error","message":"` + msg + `"}}`
		},
		ping: "event: ping\n" + `data: {"type":"ping"}` + "\n\n",
	},
	{
		name:  "gemini",
		model: providers.Model{ID: "gemini-x", API: gemini.API, Provider: "google"},
		new: func(t testing.TB, url, key string, o providers.HTTPOptions) providers.Provider {
			p, err := gemini.New(context.Background(), gemini.Options{APIKey: key, BaseURL: url, HTTPOptions: o})
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
		errorEvent: func(msg string) string {
			return `data: {"error":{"code":500,"message":"` + msg + `","status":"INTERNAL"}}` + "\n\n"
		},
		refusal: func(msg string) string {
			return `{"error":{"code":401,"message":"` + msg + `","status":"UNAUTHENTICATED"}}`
		},
		ping: `data: {"candidates":[]}` + "\n\n",
	},
}

// shortDataLines writes one event of size bytes as data lines of about
// 100 bytes each, then the blank line that would end it, on the fly.
func shortDataLines(w http.ResponseWriter, r *http.Request, head string, size int) {
	w.Header().Set("Content-Type", "text/event-stream")
	line := []byte("data: " + strings.Repeat("d", 93) + "\n")
	buf := bytes.Repeat(line, 640) // 64,000 bytes a write
	_, _ = w.Write([]byte(head))
	for n := 0; n < size && r.Context().Err() == nil; n += len(buf) {
		if _, err := w.Write(buf); err != nil {
			return
		}
	}
	_, _ = w.Write([]byte("\n"))
}

// fullSize are the hostile servers of BenchmarkHostileWires, at the sizes
// of issue #25.
var fullSize = []struct {
	name  string
	serve func(w http.ResponseWriter, r *http.Request, hw hostileWire)
}{
	{"60MB-event-as-short-lines", func(w http.ResponseWriter, r *http.Request, hw hostileWire) {
		shortDataLines(w, r, hw.head, 60<<20)
	}},
	{"50MB-line", func(w http.ResponseWriter, r *http.Request, hw hostileWire) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(hw.head + "data: "))
		buf := bytes.Repeat([]byte("l"), 64<<10)
		for n := 0; n < 50<<20 && r.Context().Err() == nil; n += len(buf) {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}},
	{"pings-without-end", func(w http.ResponseWriter, r *http.Request, hw hostileWire) {
		w.Header().Set("Content-Type", "text/event-stream")
		buf := bytes.Repeat([]byte(hw.ping), 1000)
		for r.Context().Err() == nil {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}},
	{"3MB-error-event", func(w http.ResponseWriter, r *http.Request, hw hostileWire) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(hw.errorEvent(strings.Repeat("e", 3<<20))))
	}},
	{"3MB-chunk-not-JSON", func(w http.ResponseWriter, r *http.Request, hw hostileWire) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(hw.head + "data: {" + strings.Repeat("j", 3<<20) + "\n\n"))
	}},
}

// BenchmarkHostileWires runs the hostile servers of fullSize against each
// wire with the default limits, and reports the peak heap above the
// baseline while each runs (peak-MB) and the length of the error message
// (msg-bytes).
func BenchmarkHostileWires(b *testing.B) {
	for _, w := range hostileWires {
		for _, fs := range fullSize {
			b.Run(w.name+"/"+fs.name, func(b *testing.B) {
				srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { fs.serve(rw, r, w) }))
				defer srv.Close()
				p := w.new(b, srv.URL, "k", providers.HTTPOptions{MaxRetries: -1})
				var msg string
				peak, base := heapwatch.Peak(5*time.Millisecond, func() {
					for b.Loop() {
						evs := recorded.Collect(b, context.Background(), p, recorded.Hi(w.model))
						m := evs[len(evs)-1].Message
						if m.StopReason != providers.StopReasonError {
							b.Fatalf("%s: %.200q", m.StopReason, m.ErrorMessage)
						}
						msg = m.ErrorMessage
					}
				})
				b.Logf("%.120q", msg)
				b.ReportMetric(float64(peak-min(peak, base))/(1<<20), "peak-MB")
				b.ReportMetric(float64(len(msg)), "msg-bytes")
			})
		}
	}
}
