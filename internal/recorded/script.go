package recorded

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
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
