package agent

import (
	"slices"
	"sync"

	"github.com/agentloop/agentloop/providers"
)

// QueueMode says how many queued messages a run takes at each point where
// it picks them up.
type QueueMode int

const (
	// QueueOneAtATime delivers the oldest queued message only; the rest
	// wait for the next turn. It is the default.
	QueueOneAtATime QueueMode = iota
	// QueueAll delivers every queued message at once.
	QueueAll
)

// A Queue holds messages waiting for a run: an agent's steering queue
// (Agent.Steering) or its follow-up queue (Agent.FollowUps). A run takes
// them in the order pushed, by the queue's mode (Options.SteeringMode,
// Options.FollowUpMode). Its methods are safe for concurrent use, from any
// goroutine, during a run or between runs.
//
//	a.Steering().Push(providers.NewUserText("Use metric units."))
//
// Queue is an interface so that an Interface for a run hosted elsewhere can
// hand out queues that forward what is pushed.
type Queue interface {
	// Push adds msgs at the end of the queue. Nil messages are skipped.
	Push(msgs ...providers.Message)
	// Clear drops every message waiting in the queue.
	Clear()
	// Len reports how many messages are waiting.
	Len() int
}

// queue is an Agent's Queue.
type queue struct {
	mu   sync.Mutex
	msgs []providers.Message
}

func (q *queue) Push(msgs ...providers.Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range msgs {
		if m != nil {
			q.msgs = append(q.msgs, m)
		}
	}
}

func (q *queue) Clear() {
	q.mu.Lock()
	q.msgs = nil
	q.mu.Unlock()
}

func (q *queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.msgs)
}

// take removes and returns what a run takes at once by mode: the oldest
// message, or all of them.
func (q *queue) take(mode QueueMode) []providers.Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.msgs) == 0 {
		return nil
	}
	if mode == QueueAll {
		out := q.msgs
		q.msgs = nil
		return out
	}
	out := []providers.Message{q.msgs[0]}
	q.msgs = slices.Clone(q.msgs[1:])
	return out
}

// putBack puts msgs, taken by take, back at the head of the queue.
func (q *queue) putBack(msgs []providers.Message) {
	q.mu.Lock()
	q.msgs = append(slices.Clip(msgs), q.msgs...)
	q.mu.Unlock()
}
