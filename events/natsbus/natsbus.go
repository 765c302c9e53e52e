// Package natsbus carries a run's events and control messages over NATS
// JetStream, so that agents can run in worker processes while user
// interfaces and controllers live elsewhere.
//
// Subjects, for a run id (a single NATS subject token):
//
//	agentloop.runs.<run>.events    every event of the run, in order
//	agentloop.runs.<run>.control   commands for the run: prompt, steer, follow_up, abort
//
// An event message's data is the event's JSON (package events' encoding,
// the reference's names); its headers carry the event type
// (Agentloop-Type), the run id (Agentloop-Run) and the run's own sequence
// number (Agentloop-Seq, from 1). The publisher sets Nats-Msg-Id to
// "<run>-<seq>", so a publish retried across a server restart is stored
// once. A subscriber reads with an ordered consumer, which JetStream
// recreates after reconnects and restarts, and drops anything at or below
// the last sequence it delivered: the consumer sees every event exactly
// once, in order, from any starting sequence, then follows live.
//
// Control messages are JSON [Command] values read by a durable consumer with
// explicit acknowledgement: each command reaches the worker at least once
// and is applied once per worker.
package natsbus

import (
	"context"
	"encoding/json"

	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentloop/agentloop/events"
)

// StreamName is the JetStream stream that holds every run's subjects.
const StreamName = "AGENTLOOP_RUNS"

// Header names of an event message.
const (
	HeaderType = "Agentloop-Type"
	HeaderRun  = "Agentloop-Run"
	HeaderSeq  = "Agentloop-Seq"
)

// EventsSubject is the subject of a run's events.
func EventsSubject(runID string) string { return "agentloop.runs." + runID + ".events" }

// ControlSubject is the subject of a run's control messages.
func ControlSubject(runID string) string { return "agentloop.runs." + runID + ".control" }

// CheckRunID returns an error unless id can be a subject token: not empty,
// no dots, wildcards or white space.
func CheckRunID(id string) error {
	if id == "" || strings.ContainsAny(id, ".*> \t\r\n") {
		return fmt.Errorf("natsbus: run id %q is not a valid subject token", id)
	}
	return nil
}

// EnsureStream creates the stream (file storage, a two-minute duplicate
// window) or updates it to the expected subjects.
func EnsureStream(ctx context.Context, js jetstream.JetStream) (jetstream.Stream, error) {
	s, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       StreamName,
		Subjects:   []string{"agentloop.runs.*.events", "agentloop.runs.*.control"},
		Storage:    jetstream.FileStorage,
		Duplicates: 2 * time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: stream %s: %w", StreamName, err)
	}
	return s, nil
}

// Publisher publishes a run's events. Its Publish method is an events
// handler: subscribe it to an agent (or a loop's sink).
type Publisher struct {
	// RetryFor bounds how long one event is retried while the server is
	// unreachable (a restart, a network cut); 0 means one minute. An event
	// still unpublished then is logged and counted, and the run goes on.
	RetryFor time.Duration
	// Logger receives publish failures; nil means slog.Default().
	Logger *slog.Logger

	js     jetstream.JetStream
	run    string
	mu     sync.Mutex
	seq    uint64
	failed uint64
}

// NewPublisher returns a Publisher for the run.
func NewPublisher(js jetstream.JetStream, runID string) (*Publisher, error) {
	if err := CheckRunID(runID); err != nil {
		return nil, err
	}
	return &Publisher{js: js, run: runID}, nil
}

// Publish stores e on the run's events subject and waits for JetStream's
// acknowledgement, retrying with backoff while the server is unreachable.
// It keeps publishing after the run's context is cancelled: the closing
// events of an aborted run matter most.
func (p *Publisher) Publish(ctx context.Context, e events.Event) {
	data, err := events.Marshal(e)
	if err != nil {
		p.fail(e, err)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock() // one at a time: the sequence is the stream's order
	p.seq++
	msg := nats.NewMsg(EventsSubject(p.run))
	msg.Data = data
	msg.Header.Set(HeaderType, string(e.Type()))
	msg.Header.Set(HeaderRun, p.run)
	msg.Header.Set(HeaderSeq, strconv.FormatUint(p.seq, 10))
	id := p.run + "-" + strconv.FormatUint(p.seq, 10)
	retryFor := p.RetryFor
	if retryFor <= 0 {
		retryFor = time.Minute
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), retryFor)
	defer cancel()
	wait := 20 * time.Millisecond
	for {
		actx, acancel := context.WithTimeout(pctx, 2*time.Second)
		_, err = p.js.PublishMsg(actx, msg, jetstream.WithMsgID(id))
		acancel()
		if err == nil {
			return
		}
		select {
		case <-pctx.Done():
			p.fail(e, err)
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

func (p *Publisher) fail(e events.Event, err error) {
	p.failed++
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	log.Error("natsbus: event not published", "run", p.run, "event", string(e.Type()), "err", err)
}

// Failed reports how many events could not be published.
func (p *Publisher) Failed() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// Seq reports the sequence number of the last event published.
func (p *Publisher) Seq() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seq
}

// Subscription delivers a run's events until stopped.
type Subscription struct {
	cc   jetstream.ConsumeContext
	mu   sync.Mutex
	last uint64
	bad  uint64
}

// Subscribe delivers the run's events from sequence from (1 for all of
// them), in order and each once, to h, on a goroutine of the NATS client:
// first what the stream holds, then live. h must not block for long.
func Subscribe(ctx context.Context, js jetstream.JetStream, runID string, from uint64, h func(seq uint64, e events.Event)) (*Subscription, error) {
	if err := CheckRunID(runID); err != nil {
		return nil, err
	}
	c, err := js.OrderedConsumer(ctx, StreamName, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{EventsSubject(runID)},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: subscribe %s: %w", runID, err)
	}
	s := &Subscription{last: max(from, 1) - 1}
	s.cc, err = c.Consume(func(m jetstream.Msg) {
		seq, err := strconv.ParseUint(m.Headers().Get(HeaderSeq), 10, 64)
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil || seq <= s.last {
			return // before the start, or delivered already
		}
		e, err := events.Unmarshal(m.Data())
		if err != nil {
			s.bad++
			return
		}
		s.last = seq
		h(seq, e)
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: subscribe %s: %w", runID, err)
	}
	return s, nil
}

// Last reports the sequence number of the last event delivered.
func (s *Subscription) Last() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Stop ends the subscription.
func (s *Subscription) Stop() { s.cc.Stop() }

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

// Send publishes a command for the run and waits until JetStream stores it.
func Send(ctx context.Context, js jetstream.JetStream, runID string, cmd Command) error {
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
	if _, err := js.Publish(ctx, ControlSubject(runID), data); err != nil {
		return fmt.Errorf("natsbus: send %s: %w", cmd.Type, err)
	}
	return nil
}

// Serve delivers the run's commands to h, in order, through a durable
// consumer named worker (one name per worker role: workers sharing it share
// the commands). A command is acknowledged after h returns; one that cannot
// be decoded is acknowledged and dropped. Call stop to end.
func Serve(ctx context.Context, js jetstream.JetStream, runID, worker string, h func(Command)) (stop func(), err error) {
	if err := CheckRunID(runID); err != nil {
		return nil, err
	}
	if err := CheckRunID(worker); err != nil {
		return nil, err
	}
	c, err := js.CreateOrUpdateConsumer(ctx, StreamName, jetstream.ConsumerConfig{
		Durable:       "ctl-" + runID + "-" + worker,
		FilterSubject: ControlSubject(runID),
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

// Target is what a command acts on; *agent.Agent is one.
type Target interface {
	SteerText(text string)
	FollowUpText(text string)
	Abort()
}

// Apply carries out a steer, follow_up or abort command on t, and reports
// false for a prompt, which the caller handles (it starts a run).
func (c Command) Apply(t Target) bool {
	switch c.Type {
	case CommandSteer:
		t.SteerText(c.Text)
	case CommandFollowUp:
		t.FollowUpText(c.Text)
	case CommandAbort:
		t.Abort()
	default:
		return false
	}
	return true
}
