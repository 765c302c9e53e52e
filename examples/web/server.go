package main

import (
	"context"
	"net/http"
	"sync"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events/sse"
	"github.com/agentloop/agentloop/events/sse/webchat"
)

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
	return webchat.Handler(webchat.Backend{Events: s.broker, Send: s.send, Stop: func(context.Context) error {
		s.agent.Abort()
		return nil
	}})
}

// send starts a run with the text, or steers the running one.
func (s *server) send(_ context.Context, text string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		s.agent.SteerText(text)
		return "steer", nil
	}
	s.running = true
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		_ = s.agent.Prompt(context.Background(), text)
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()
	return "prompt", nil
}

// close stops the running turn and ends the event streams.
func (s *server) close() {
	s.agent.Abort()
	s.runs.Wait()
	s.broker.Close()
}
