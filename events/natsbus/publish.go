package natsbus

import (
	"context"
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

// Publisher publishes a run's events on its Bus's EventsSubject. Its
// Handle method is an events.Handler: subscribe it to an agent (or pass
// it to a run). Handle never waits on the network: events go to a bounded
// queue that one goroutine publishes in order, retrying while the server
// is unreachable. Close the Publisher to flush the queue and stop the
// goroutine.
//
// Every event that is not published is reported: counted (Failed) and
// logged, an agent_end at level error with the run and the reason.
type Publisher struct {
	bus      *Bus
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
	// Logger receives what is trimmed or not published; nil means
	// slog.Default().
	Logger *slog.Logger

	// RetryFor bounds how long one event is retried while the server is
	// unreachable (a restart, a network cut); 0 means one minute.
	RetryFor time.Duration
	// MaxQueued bounds the events waiting to be published; 0 means 4096.
	// Past it, Handle waits up to QueueWait for room, then drops the
	// event (reported).
	MaxQueued int
	// QueueWait bounds how long Handle waits for room; 0 means 1 s.
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

// Publisher returns a Publisher for the run, continuing the run's
// sequence from the last event the stream holds for it: a worker that
// restarts for the same run id goes on where the last one stopped.
func (b *Bus) Publisher(ctx context.Context, runID string, opts PublisherOptions) (*Publisher, error) {
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
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	last, err := b.lastSeq(ctx, runID)
	if err != nil {
		return nil, err
	}
	p := &Publisher{bus: b, run: runID, opts: opts, seq: last, queue: make(chan outgoing, opts.MaxQueued), done: make(chan struct{})}
	go p.send()
	return p, nil
}

// lastSeq reads the sequence of the run's last event in the stream, or 0.
func (b *Bus) lastSeq(ctx context.Context, runID string) (uint64, error) {
	st, err := b.js.Stream(ctx, b.stream)
	if err != nil {
		return 0, fmt.Errorf("natsbus: stream %s: %w", b.stream, err)
	}
	m, err := st.GetLastMsgForSubject(ctx, b.EventsSubject(runID))
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

// Handle queues e to be published; it is an events.Handler. It returns at
// once unless the queue is full, and then waits at most QueueWait.
func (p *Publisher) Handle(_ context.Context, e events.Event) {
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
		p.opts.Logger.Warn("natsbus: event trimmed to fit MaxEventBytes", "run", p.run, "event", string(out.typ), "bytes", size, "max", p.opts.MaxEventBytes)
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
	msg := nats.NewMsg(p.bus.EventsSubject(p.run))
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
		_, err := p.bus.js.PublishMsg(actx, msg, jetstream.WithMsgID(id))
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
	p.opts.Logger.Error("natsbus: event not published", "run", p.run, "event", string(typ), "err", err)
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
