package recorded

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/providers"
)

// Reply is one scripted answer of a Script server.
type Reply struct {
	Status int               // 0 means 200, with an event-stream body
	Header map[string]string // added to the response
	Body   string
	// Hold keeps the stream open after the body until the client goes.
	Hold bool
}

// Request is a request a Script server received.
type Request struct {
	Path   string
	Query  string
	Header http.Header
	Body   map[string]any
}

// Script is a server that answers requests with scripted replies in order
// (a 500 once they run out) and records every request.
type Script struct {
	URL     string
	mu      sync.Mutex
	replies []Reply
	reqs    []Request
}

// NewScript starts a Script server, stopped when the test ends.
func NewScript(t *testing.T, replies ...Reply) *Script {
	t.Helper()
	s := &Script{replies: replies}
	srv := httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func (s *Script) handle(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, Request{Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	rep := Reply{Status: 500, Body: `{"error":{"message":"no scripted reply left"}}`}
	if n < len(s.replies) {
		rep = s.replies[n]
	}
	s.mu.Unlock()
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	if rep.Status != 0 && rep.Status != 200 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		_, _ = io.WriteString(w, rep.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, rep.Body)
	w.(http.Flusher).Flush()
	if rep.Hold {
		<-r.Context().Done()
	}
}

// Requests returns the requests received so far.
func (s *Script) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// SSE frames JSON events as Server-Sent Events, each named by its "type"
// field as the Messages and Responses APIs name them; an event without one
// (a Chat Completions chunk) goes as data alone.
func SSE(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(e), &head)
		if head.Type != "" {
			fmt.Fprintf(&b, "event: %s\n", head.Type)
		}
		fmt.Fprintf(&b, "data: %s\n\n", e)
	}
	return b.String()
}

// Hi is a request of one user message to the model.
func Hi(m providers.Model) *providers.Request {
	return &providers.Request{Model: m, Messages: []providers.Message{providers.NewUserText("hi")}}
}

// Collect runs one request through p and returns its events, failing the
// test unless they end with done or error.
func Collect(t testing.TB, ctx context.Context, p providers.Provider, req *providers.Request) []providers.StreamEvent {
	t.Helper()
	seq, err := p.Stream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var evs []providers.StreamEvent
	for e := range seq {
		evs = append(evs, e)
	}
	if n := len(evs); n == 0 || (evs[n-1].Type != providers.StreamDone && evs[n-1].Type != providers.StreamError) {
		t.Fatalf("the stream did not end with done or error: %d events", n)
	}
	return evs
}
