// Package natsbus carries a run's events and control messages over NATS
// JetStream, so that agents can run in worker processes while user
// interfaces and controllers live elsewhere.
//
// Subjects, for a run id (1 to MaxIDLength letters, digits, '_' or '-';
// see CheckRunID):
//
//	agentloop.runs.<run>.events    every event of the run, in order
//	agentloop.runs.<run>.control   commands for the run: prompt, steer, follow_up, abort
//
// An event message's data is the event's wire JSON (events.MarshalWire:
// the reference's names; a message_update carries only its change; the
// event's envelope: its position in its run, its path, its attempt); its headers carry the event type
// (Agentloop-Type), the run id (Agentloop-Run) and the run's own sequence
// number (Agentloop-Seq, from 1, continued by a publisher that restarts
// for the run). The publisher sets Nats-Msg-Id to "<run>-<seq>", so a
// publish retried across a server restart is stored once; it publishes
// from a bounded queue, so the run never waits on the network. A subscriber reads with an ordered consumer, which JetStream
// recreates after reconnects and restarts, and drops anything at or below
// the last sequence it delivered: the consumer sees every event exactly
// once, in order, from any starting sequence, then follows live.
//
// Two sequences, two jobs. Agentloop-Seq numbers the messages of the
// subject, one publisher's count across every run published on it: it
// dedupes, resumes and finds gaps on the bus. The envelope's position
// (events.Seq, in the data) is the run's own numbering, per run and per
// nested path, which several publishers of one run can assign without
// sharing a counter; a subscriber checks it with events.SeqCheck. Each
// run on the subject numbers from 1, so the envelope alone does not name a
// message: Nats-Msg-Id stays the subject's sequence.
//
// Control messages are JSON [Command] values read by a durable consumer with
// explicit acknowledgement: each command reaches the worker at least once
// and is applied once per worker.
package natsbus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
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

// MaxIDLength bounds a run or worker id.
const MaxIDLength = 128

// CheckRunID returns an error unless id is a valid run or worker id: 1 to
// MaxIDLength letters, digits, '_' and '-'. Every function of the package
// checks its ids with it, so an id that passes here works everywhere.
func CheckRunID(id string) error {
	if id == "" || len(id) > MaxIDLength {
		return fmt.Errorf("natsbus: id %.40q: want 1 to %d letters, digits, '_' or '-'", id, MaxIDLength)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("natsbus: id %.40q: want 1 to %d letters, digits, '_' or '-'", id, MaxIDLength)
		}
	}
	return nil
}

// StreamLimits bound what the stream keeps. The zero value means the
// defaults.
type StreamLimits struct {
	// MaxAge drops messages older than this; 0 means 7 days.
	MaxAge time.Duration
	// MaxBytes drops the oldest messages past this size; 0 means 1 GiB.
	MaxBytes int64
}

// EnsureStream creates the stream (file storage, a two-minute duplicate
// window, the default limits) or updates it to the expected subjects.
func EnsureStream(ctx context.Context, js jetstream.JetStream) (jetstream.Stream, error) {
	return EnsureStreamWith(ctx, js, StreamLimits{})
}

// EnsureStreamWith is EnsureStream with limits of one's own.
func EnsureStreamWith(ctx context.Context, js jetstream.JetStream, l StreamLimits) (jetstream.Stream, error) {
	if l.MaxAge <= 0 {
		l.MaxAge = 7 * 24 * time.Hour
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = 1 << 30
	}
	s, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       StreamName,
		Subjects:   []string{"agentloop.runs.*.events", "agentloop.runs.*.control"},
		Storage:    jetstream.FileStorage,
		Duplicates: 2 * time.Minute,
		MaxAge:     l.MaxAge,
		MaxBytes:   l.MaxBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: stream %s: %w", StreamName, err)
	}
	return s, nil
}

// Publisher publishes a run's events. Its Publish method is an events
// handler: subscribe it to an agent (or pass it to a run). Publish never
// waits on the network: events go to a bounded queue that one goroutine
// publishes in order, retrying while the server is unreachable. Close the
// Publisher to flush the queue and stop the goroutine.
//
// Every event that is not published is reported: counted (Failed) and
// logged, an agent_end at level error with the run and the reason.
type Publisher struct {
	// Logger receives publish failures; nil means slog.Default().
	Logger *slog.Logger

	js       jetstream.JetStream
	run      string
	opts     PublisherOptions
	queue    chan outgoing
	done     chan struct{}
	mu       sync.Mutex
	seq      uint64
	failed   uint64
	trimmed  uint64
	closed   bool
	stopOnce sync.Once
}

// PublisherOptions configure a Publisher. The zero value means the
// defaults.
type PublisherOptions struct {
	// RetryFor bounds how long one event is retried while the server is
	// unreachable (a restart, a network cut); 0 means one minute.
	RetryFor time.Duration
	// MaxQueued bounds the events waiting to be published; 0 means 4096.
	// Past it, Publish waits up to QueueWait for room, then drops the
	// event (reported).
	MaxQueued int
	// QueueWait bounds how long Publish waits for room; 0 means 1 s.
	QueueWait time.Duration
	// MaxEventBytes bounds one event's JSON. A larger event is published
	// with its longest strings cut to fit, each cut marked and the message
	// flagged with HeaderTrimmed (and logged); one that cannot be made to
	// fit fails at once (reported) instead of being retried. The run's own
	// record (its transcript, a saved session) is never cut. 0 means 1 MiB,
	// NATS's default maximum payload.
	MaxEventBytes int
}

type outgoing struct {
	seq     uint64
	typ     events.Type
	data    []byte
	trimmed int // the size before trimming, or 0
}

// NewPublisher returns a Publisher for the run, continuing the run's
// sequence from the last event the stream holds for it: a worker that
// restarts for the same run id goes on where the last one stopped.
func NewPublisher(ctx context.Context, js jetstream.JetStream, runID string, opts PublisherOptions) (*Publisher, error) {
	if err := CheckRunID(runID); err != nil {
		return nil, err
	}
	if opts.RetryFor <= 0 {
		opts.RetryFor = time.Minute
	}
	if opts.MaxQueued <= 0 {
		opts.MaxQueued = 4096
	}
	if opts.QueueWait <= 0 {
		opts.QueueWait = time.Second
	}
	if opts.MaxEventBytes <= 0 {
		opts.MaxEventBytes = 1 << 20
	}
	last, err := lastSeq(ctx, js, runID)
	if err != nil {
		return nil, err
	}
	p := &Publisher{js: js, run: runID, opts: opts, seq: last, queue: make(chan outgoing, opts.MaxQueued), done: make(chan struct{})}
	go p.send()
	return p, nil
}

// lastSeq reads the sequence of the run's last event in the stream, or 0.
func lastSeq(ctx context.Context, js jetstream.JetStream, runID string) (uint64, error) {
	st, err := js.Stream(ctx, StreamName)
	if err != nil {
		return 0, fmt.Errorf("natsbus: stream %s: %w", StreamName, err)
	}
	m, err := st.GetLastMsgForSubject(ctx, EventsSubject(runID))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("natsbus: the last event of %s: %w", runID, err)
	}
	seq, err := strconv.ParseUint(m.Header.Get(HeaderSeq), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("natsbus: the last event of %s has no sequence: %w", runID, err)
	}
	return seq, nil
}

// Publish queues e to be published. It returns at once unless the queue
// is full, and then waits at most QueueWait.
func (p *Publisher) Publish(_ context.Context, e events.Event) {
	data, err := events.MarshalWire(e)
	size := len(data)
	if err == nil && size > p.opts.MaxEventBytes {
		var ok bool
		if data, ok = trim(data, p.opts.MaxEventBytes); !ok {
			err = fmt.Errorf("the event's JSON is %d bytes, more than MaxEventBytes (%d), even with its strings cut", size, p.opts.MaxEventBytes)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil && p.closed {
		err = errors.New("the publisher is closed")
	}
	if err != nil {
		p.failLocked(e.Type(), err)
		return
	}
	p.seq++
	out := outgoing{seq: p.seq, typ: e.Type(), data: data}
	if size > p.opts.MaxEventBytes {
		out.trimmed = size
		p.trimmed++
		p.logger().Warn("natsbus: event trimmed to fit MaxEventBytes", "run", p.run, "event", string(out.typ), "bytes", size, "max", p.opts.MaxEventBytes)
	}
	select {
	case p.queue <- out:
		return
	default:
	}
	// Full: wait a little for room, holding the lock so that the order of
	// the queue stays the order of the sequence.
	t := time.NewTimer(p.opts.QueueWait)
	defer t.Stop()
	select {
	case p.queue <- out:
	case <-t.C:
		p.failLocked(out.typ, fmt.Errorf("%d events were waiting to be published (MaxQueued)", p.opts.MaxQueued))
	}
}

// send publishes the queue in order until it is closed and drained.
func (p *Publisher) send() {
	defer close(p.done)
	for out := range p.queue {
		if err := p.publish(out); err != nil {
			p.mu.Lock()
			p.failLocked(out.typ, err)
			p.mu.Unlock()
		}
	}
}

func (p *Publisher) publish(out outgoing) error {
	msg := nats.NewMsg(EventsSubject(p.run))
	msg.Data = out.data
	msg.Header.Set(HeaderType, string(out.typ))
	msg.Header.Set(HeaderRun, p.run)
	msg.Header.Set(HeaderSeq, strconv.FormatUint(out.seq, 10))
	if out.trimmed > 0 {
		msg.Header.Set(HeaderTrimmed, strconv.Itoa(out.trimmed))
	}
	id := p.run + "-" + strconv.FormatUint(out.seq, 10)
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.RetryFor)
	defer cancel()
	wait := 20 * time.Millisecond
	for {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := p.js.PublishMsg(actx, msg, jetstream.WithMsgID(id))
		acancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// Close stops taking events and waits until the queued ones are published
// or ctx is done; events left then are reported as not published. It
// returns ctx's error when it gave up waiting.
func (p *Publisher) Close(ctx context.Context) error {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		close(p.queue)
		p.mu.Unlock()
	})
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// failLocked reports an event that will not be published; p.mu is held.
func (p *Publisher) failLocked(typ events.Type, err error) {
	p.failed++
	p.logger().Error("natsbus: event not published", "run", p.run, "event", string(typ), "err", err)
}

func (p *Publisher) logger() *slog.Logger {
	if p.Logger == nil {
		return slog.Default()
	}
	return p.Logger
}

// Trimmed reports how many events were published with strings cut to fit
// MaxEventBytes.
func (p *Publisher) Trimmed() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.trimmed
}

// Failed reports how many events could not be published.
func (p *Publisher) Failed() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// Seq reports the sequence number of the last event queued.
func (p *Publisher) Seq() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seq
}

// Subscription delivers a run's events until stopped.
type Subscription struct {
	cc  jetstream.ConsumeContext
	mu  sync.Mutex
	seq sequencer
}

// MaxGap is the largest jump in sequence a subscriber accepts: events lost
// by a publisher leave gaps, but a message that claims to be far ahead of
// the run (a forged one) would silence the subscriber, so it is skipped and
// counted (Bad) instead. A smaller jump is delivered, and undone if the
// run's sequence then goes on from before it (see Bad).
const MaxGap = 1 << 16

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
	s := &Subscription{seq: sequencer{last: max(from, 1) - 1}}
	s.cc, err = c.Consume(func(m jetstream.Msg) {
		seq, err := strconv.ParseUint(m.Headers().Get(HeaderSeq), 10, 64)
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.seq.bad++
			return
		}
		e, err := events.Unmarshal(m.Data())
		if err != nil {
			if seq > s.seq.last {
				s.seq.bad++
			}
			return
		}
		if s.seq.accept(seq) {
			h(seq, e)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: subscribe %s: %w", runID, err)
	}
	return s, nil
}

// Bad reports how many messages broke the run's sequence: undecodable or
// unnumbered ones and those too far ahead (skipped), and jumps the run's
// own events then contradicted (a forged message that was delivered before
// the genuine sequence showed it up; the sequence passed to the handler
// then goes back to the run's).
func (s *Subscription) Bad() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq.bad
}

// Last reports the sequence number of the last event delivered.
func (s *Subscription) Last() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq.last
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
		Durable:       consumerName(runID, worker),
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

// consumerName names the durable consumer of a run's worker, one name per
// pair: a hash, since ids may contain the separator any join would use.
func consumerName(runID, worker string) string {
	h := sha256.Sum256([]byte(runID + "\x00" + worker))
	return "ctl-" + hex.EncodeToString(h[:16])
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
