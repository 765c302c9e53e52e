package agent

import (
	"context"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
)

// Interface is what a program does with an agent, whoever runs it: prompt
// it, steer the run, queue a follow-up, abort, read its state, and follow
// its events. *Agent implements it in process; a client of a run hosted
// elsewhere (a durable run on a workflow engine) and an agent offered to
// another as a tool implement the same verbs, so a program changes how it
// constructs the agent, not how it talks to it.
//
// The events a subscriber receives carry their envelope (events.Envelope):
// a remote run's events arrive numbered as the run published them, and a
// nested run's with the path of the call that ran it.
type Interface interface {
	// PromptMessages starts a run with msgs and returns when it has ended;
	// while one is active it returns ErrBusy.
	PromptMessages(ctx context.Context, msgs ...providers.Message) error
	// Steer queues messages for the active run's next model call.
	Steer(msgs ...providers.Message)
	// FollowUp queues messages that start another turn when the run would
	// otherwise end.
	FollowUp(msgs ...providers.Message)
	// Abort cancels the active run; it ends with an aborted message.
	Abort()
	// State returns a snapshot: transcript, run in progress, pending calls.
	State() State
	// Subscribe registers fn for every event of every run and returns a
	// function that removes it.
	Subscribe(fn func(ctx context.Context, e events.Event)) (unsubscribe func())
}

var _ Interface = (*Agent)(nil)
