package natsbus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentloop/agentloop/providers"
)

// Command is a control message for a run.
type Command struct {
	// Type is "prompt", "steer", "follow_up" or "abort".
	Type string `json:"type"`
	// Text is the user message of prompt, steer and follow_up.
	Text string `json:"text,omitempty"`
}

// The command types.
const (
	CommandPrompt   = "prompt"
	CommandSteer    = "steer"
	CommandFollowUp = "follow_up"
	CommandAbort    = "abort"
)

// Send publishes a command for the run on its ControlSubject and waits
// until JetStream stores it.
func (b *Bus) Send(ctx context.Context, runID string, cmd Command) error {
	if err := CheckRunID(runID); err != nil {
		return err
	}
	switch cmd.Type {
	case CommandPrompt, CommandSteer, CommandFollowUp, CommandAbort:
	default:
		return fmt.Errorf("natsbus: unknown command type %q", cmd.Type)
	}
	data, err := json.Marshal(cmd)
	if err != nil {
		return err
	}
	if _, err := b.js.Publish(ctx, b.ControlSubject(runID), data); err != nil {
		return fmt.Errorf("natsbus: send %s: %w", cmd.Type, err)
	}
	return nil
}

// Serve delivers the run's commands to h, in order, through a durable
// consumer named worker (one name per worker role: workers sharing it share
// the commands) with explicit acknowledgement: each command reaches the
// worker at least once and is applied once per worker. A command is
// acknowledged after h returns; one that cannot be decoded is acknowledged
// and dropped. Call stop to end.
func (b *Bus) Serve(ctx context.Context, runID, worker string, h func(Command)) (stop func(), err error) {
	if err := CheckRunID(runID); err != nil {
		return nil, err
	}
	if err := CheckRunID(worker); err != nil {
		return nil, err
	}
	c, err := b.js.CreateOrUpdateConsumer(ctx, b.stream, jetstream.ConsumerConfig{
		Durable:       consumerName(runID, worker),
		FilterSubject: b.ControlSubject(runID),
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: 1, // one at a time keeps the order
		AckWait:       30 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: serve %s: %w", runID, err)
	}
	cc, err := c.Consume(func(m jetstream.Msg) {
		var cmd Command
		if json.Unmarshal(m.Data(), &cmd) == nil {
			h(cmd)
		}
		_ = m.Ack()
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: serve %s: %w", runID, err)
	}
	return cc.Stop, nil
}

// consumerName names the durable consumer of a run's worker, one name per
// pair: a hash, since ids may contain the separator any join would use.
func consumerName(runID, worker string) string {
	h := sha256.Sum256([]byte(runID + "\x00" + worker))
	return "ctl-" + hex.EncodeToString(h[:16])
}

// Queue is where Apply puts the user message of a steer or follow_up
// command; an agent's queues (agent.Agent's Steering and FollowUps) are
// Queues.
type Queue interface {
	Push(msgs ...providers.Message)
}

// Target is what a command acts on: an agent's two queues and its abort.
//
//	t := natsbus.Target{Steering: a.Steering(), FollowUps: a.FollowUps(), Abort: a.Abort}
type Target struct {
	Steering  Queue
	FollowUps Queue
	Abort     func()
}

// Apply carries out a steer, follow_up or abort command on t: a steer or
// follow_up pushes a user message holding the command's text on the
// matching queue. It reports false, doing nothing, for a prompt (which the
// caller handles: it starts a run) and for a command whose part of t is
// nil.
func (c Command) Apply(t Target) bool {
	switch {
	case c.Type == CommandSteer && t.Steering != nil:
		t.Steering.Push(providers.NewUserText(c.Text))
	case c.Type == CommandFollowUp && t.FollowUps != nil:
		t.FollowUps.Push(providers.NewUserText(c.Text))
	case c.Type == CommandAbort && t.Abort != nil:
		t.Abort()
	default:
		return false
	}
	return true
}
