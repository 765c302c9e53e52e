package openai

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/harness/heapwatch"
	"github.com/agentloop/agentloop/providers"
)

// hostile is a server that misbehaves in one way; each writes its body on
// the fly, so the test holds no copy of it.
type hostile struct {
	name  string
	serve func(w http.ResponseWriter, r *http.Request, size int)
	want  string // in the error message
}

var hostiles = []hostile{
	{"one long tool-argument line", func(w http.ResponseWriter, r *http.Request, size int) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"w","arguments":"`)
		writeRepeated(w, r, 'x', size)
	}, "an SSE line passed"},
	{"a gzip bomb", func(w http.ResponseWriter, r *http.Request, size int) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		writeRepeated(zw, r, '\n', size)
		zw.Close()
	}, "compressed response"},
	{"junk lines", func(w http.ResponseWriter, r *http.Request, size int) {
		w.Header().Set("Content-Type", "text/event-stream")
		line := []byte("junk: " + strings.Repeat("j", 90) + "\n")
		for n := 0; n < size && r.Context().Err() == nil; n += len(line) {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	}, "the response passed"},
	{"a huge error body", func(w http.ResponseWriter, r *http.Request, size int) {
		w.WriteHeader(http.StatusBadRequest)
		writeRepeated(w, r, 'e', size)
	}, "HTTP 400: eeee"},
}

func writeRepeated(w interface{ Write([]byte) (int, error) }, r *http.Request, b byte, size int) {
	buf := bytes.Repeat([]byte{b}, 64<<10)
	for n := 0; n < size && r.Context().Err() == nil; n += len(buf) {
		if _, err := w.Write(buf); err != nil {
			return
		}
	}
}

// TestHostileServers: each misbehaving server ends the message with stop
// reason error and a message naming the limit, with small limits here (the
// benchmark below runs the full sizes against the defaults).
func TestHostileServers(t *testing.T) {
	for _, h := range hostiles {
		t.Run(h.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, 4<<20) }))
			defer srv.Close()
			p := New(Options{APIKey: "k", BaseURL: srv.URL, HTTPOptions: providers.HTTPOptions{MaxRetries: -1, MaxLineBytes: 64 << 10, MaxResponseBytes: 1 << 20}})
			m := final(stream(t, context.Background(), p, nil))
			if m.StopReason != providers.StopReasonError || !strings.Contains(m.ErrorMessage, h.want) || len(m.ErrorMessage) > 2<<10 { // httpx.MaxQuotedBytes
				t.Fatalf("%s: %q", m.StopReason, m.ErrorMessage)
			}
		})
	}
}

// TestTimeouts: a server that never answers, and one that goes silent
// mid-stream, end the message with a message naming the timeout.
func TestTimeouts(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	for _, tc := range []struct {
		name  string
		serve http.HandlerFunc
		want  string
	}{
		{"no headers", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // so that a closed connection cancels r's context
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}, "HeaderTimeout"},
		{"silent stream", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"half"}}]}`+"\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}, "IdleTimeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.serve)
			defer srv.Close()
			// The timeouts are short; the server would wait forever, so
			// only the timeout can end the stream.
			p := New(Options{APIKey: "k", BaseURL: srv.URL, HTTPOptions: providers.HTTPOptions{MaxRetries: -1, HeaderTimeout: 50 * time.Millisecond, IdleTimeout: 50 * time.Millisecond}})
			m := final(stream(t, context.Background(), p, nil))
			if m.StopReason != providers.StopReasonError || !strings.Contains(m.ErrorMessage, tc.want) {
				t.Fatalf("%s: %q", m.StopReason, m.ErrorMessage)
			}
		})
	}
}

// BenchmarkHostileServers runs the hostile servers at full size (50 MB
// line, 1 GiB unpacked gzip, 300 MB of junk lines, a 300 MB error body)
// against the default limits, and reports the peak heap above the
// baseline while each runs (peak-MB).
func BenchmarkHostileServers(b *testing.B) {
	sizes := map[string]int{"one long tool-argument line": 50 << 20, "a gzip bomb": 1 << 30, "junk lines": 300 << 20, "a huge error body": 300 << 20}
	for _, h := range hostiles {
		b.Run(strings.ReplaceAll(h.name, " ", "-"), func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, sizes[h.name]) }))
			defer srv.Close()
			p := New(Options{APIKey: "k", BaseURL: srv.URL, HTTPOptions: providers.HTTPOptions{MaxRetries: -1}})
			peak, base := heapwatch.Peak(5*time.Millisecond, func() {
				for b.Loop() {
					m := final(stream(b, context.Background(), p, nil))
					if m.StopReason != providers.StopReasonError || !strings.Contains(m.ErrorMessage, h.want) {
						b.Fatalf("%s: %q", m.StopReason, m.ErrorMessage)
					}
				}
			})
			b.ReportMetric(float64(peak-min(peak, base))/(1<<20), "peak-MB")
		})
	}
}
