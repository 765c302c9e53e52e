package main

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events/sse"
	"github.com/agentloop/agentloop/events/sse/webchat"
	"github.com/agentloop/agentloop/providers"
)

// server wires one agent to the page: its events go to the browser over
// SSE, and the page's messages and stop button come back as POSTs.
type server struct {
	agent  *agent.Agent
	broker *sse.Broker
	guard  *webchat.Guard // only the page's owner drives it
	notice string         // shown above the conversation (scriptedNotice, or none)

	mu      sync.Mutex
	running bool
	steered int // steering messages sent during the running turn
	runs    sync.WaitGroup
}

func newServer(a *agent.Agent) *server {
	s := &server{agent: a, broker: sse.New(20000), guard: webchat.NewGuard()}
	a.Subscribe(s.broker.Handle)
	return s
}

func (s *server) handler() http.Handler {
	return webchat.Handler(webchat.Backend{Events: s.broker, Send: s.send, Guard: s.guard, Notice: s.notice, Stop: func(context.Context) error {
		s.agent.Abort()
		return nil
	}})
}

// scriptedNotice is what the page says when the scripted model answers.
const scriptedNotice = "A scripted model answers: every message gets the same three tool calls and a canned summary. " +
	"Set OPENAI_API_KEY (and OPENAI_BASE_URL, OPENAI_MODEL for another server) and restart for a real one."

// maxSteering bounds the messages queued for one running turn.
const maxSteering = 16

// send starts a run with the text, or steers the running one.
func (s *server) send(_ context.Context, text string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		if s.steered >= maxSteering {
			return "", errors.New("too many messages are waiting for the running turn; wait for it to end")
		}
		s.steered++
		s.agent.Steering().Push(providers.NewUserText(text))
		return "steer", nil
	}
	s.steered = 0
	s.running = true
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		_ = s.agent.Prompt(context.Background(), providers.NewUserText(text))
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
