package agent

import (
	"context"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
)

// Interface is what a program does with an agent, whoever runs it: prompt
// it, steer the run and queue follow-ups (its two queues), abort, read its
// state, and follow its events. *Agent implements it in process; a client
// of a run hosted elsewhere (a durable run on a workflow engine) and an
// agent offered to another as a tool implement the same verbs, their
// queues forwarding what is pushed, so a program changes how it constructs
// the agent, not how it talks to it.
//
// The events a subscriber receives carry their envelope (events.Envelope):
// a remote run's events arrive numbered as the run published them, and a
// nested run's with the path of the call that ran it.
type Interface interface {
	// Prompt starts a run with msgs and returns when it has ended; while
	// one is active it returns ErrBusy.
	Prompt(ctx context.Context, msgs ...providers.Message) error
	// Steering is the queue of messages for the active run's next model
	// call.
	Steering() Queue
	// FollowUps is the queue of messages that start another turn when the
	// run would otherwise end.
	FollowUps() Queue
	// Abort cancels the active run; it ends with an aborted message.
	Abort()
	// State returns a snapshot: transcript, run in progress, pending calls.
	State() State
	// Subscribe registers h for every event of every run and returns a
	// function that removes it.
	Subscribe(h events.Handler) (unsubscribe func())
}

var _ Interface = (*Agent)(nil)
