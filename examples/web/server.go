package main

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"
	"sync"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events/sse"
)

//go:embed static
var static embed.FS

// server wires one agent to the page: its events go to the browser over
// SSE, and the page's messages and stop button come back as POSTs.
type server struct {
	agent  *agent.Agent
	broker *sse.Broker

	mu      sync.Mutex
	running bool
	runs    sync.WaitGroup
}

func newServer(a *agent.Agent) *server {
	s := &server{agent: a, broker: sse.New(20000)}
	a.Subscribe(s.broker.Publish)
	return s
}

func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	files, _ := fs.Sub(static, "static")
	mux.Handle("GET /", http.FileServerFS(files))
	mux.Handle("GET /api/events", s.broker)
	mux.HandleFunc("POST /api/send", s.send)
	mux.HandleFunc("POST /api/stop", func(w http.ResponseWriter, _ *http.Request) {
		s.agent.Abort()
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

// send starts a run with the text, or steers the running one.
func (s *server) send(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Text string `json:"text"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil || strings.TrimSpace(in.Text) == "" {
		http.Error(w, "want {\"text\": \"...\"}", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	mode := "steer"
	if !s.running {
		mode = "prompt"
		s.running = true
		s.runs.Add(1)
		go func() {
			defer s.runs.Done()
			_ = s.agent.Prompt(context.Background(), in.Text)
			s.mu.Lock()
			s.running = false
			s.mu.Unlock()
		}()
	} else {
		s.agent.SteerText(in.Text)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"mode": mode})
}

// close stops the running turn and ends the event streams.
func (s *server) close() {
	s.agent.Abort()
	s.runs.Wait()
	s.broker.Close()
}
