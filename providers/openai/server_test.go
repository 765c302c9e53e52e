package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/harness/recorded"
	"github.com/agentloop/agentloop/providers"
)

// reply is one scripted HTTP answer of the test server.
type reply struct {
	status  int
	headers map[string]string
	body    string // written as is
	fixture string // or a file of testdata, in the SSE wire format
	// piece, when > 0, writes the body in pieces of that many bytes,
	// flushing after each: fragments split mid-token and mid-character.
	piece int
	// hold keeps the connection open after the body until the client goes.
	hold bool
	// drop closes the connection without finishing the response.
	drop bool
}

// server is an OpenAI-compatible HTTP server that answers with scripted
// replies in order and records every request body.
type server struct {
	t       testing.TB
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	bodies  []map[string]any
	auth    []string
	check   func(n int, body map[string]any) // optional, per request
}

func newServer(t testing.TB, replies ...reply) *server {
	s := &server{t: t, replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *server) handle(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, body)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	var rep reply
	if n < len(s.replies) {
		rep = s.replies[n]
	} else {
		rep = reply{status: 500, body: `{"error":{"message":"no scripted reply left","type":"server_error"}}`}
	}
	check := s.check
	s.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "unexpected path "+r.URL.Path, http.StatusNotFound)
		return
	}
	if check != nil {
		check(n, body)
	}
	payload := []byte(rep.body)
	if rep.fixture != "" {
		var err error
		if payload, err = os.ReadFile(filepath.Join("testdata", rep.fixture)); err != nil {
			s.t.Errorf("fixture: %v", err)
		}
	}
	for k, v := range rep.headers {
		w.Header().Set(k, v)
	}
	if rep.status != 0 && rep.status != 200 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		_, _ = w.Write(payload)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	flusher := w.(http.Flusher)
	size := rep.piece
	if size <= 0 {
		size = len(payload)
	}
	for i := 0; i < len(payload); i += size {
		if _, err := w.Write(payload[i:min(i+size, len(payload))]); err != nil {
			return
		}
		flusher.Flush()
	}
	if rep.drop {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	if rep.hold {
		<-r.Context().Done()
	}
}

func (s *server) requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.bodies...)
}

func (s *server) provider(opts Options) *Provider {
	opts.BaseURL = s.srv.URL + "/v1"
	if opts.APIKey == "" {
		opts.APIKey = "sk-test"
	}
	if opts.RetryBaseDelay == 0 {
		opts.RetryBaseDelay = time.Millisecond
	}
	return New(opts)
}

var testModel = providers.Model{ID: "test-model", API: "openai-completions", Provider: "openai",
	Prices: providers.Prices{Input: 1, Output: 2, CacheRead: 0.5}}

// stream runs one request to testModel and collects its events.
func stream(t testing.TB, ctx context.Context, p *Provider, req *providers.Request) []providers.StreamEvent {
	t.Helper()
	if req == nil {
		req = recorded.Hi(testModel)
	}
	req.Model = testModel
	return recorded.Collect(t, ctx, p, req)
}

func final(evs []providers.StreamEvent) *providers.AssistantMessage { return evs[len(evs)-1].Message }

func wrapHeader(next http.Handler, got *string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*got = r.Header.Get("X-Test")
		next.ServeHTTP(w, r)
	})
}
