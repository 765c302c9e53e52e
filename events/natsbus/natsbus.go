// Package natsbus carries agent runs over NATS JetStream: a worker
// process publishes a run's events and takes its commands, while pages
// and controllers elsewhere follow the events and send the commands.
//
//	bus, err := natsbus.New(js, natsbus.Options{}) // js from jetstream.New(nc)
//	_, err = bus.EnsureStream(ctx)
//
//	pub, err := bus.Publisher(ctx, runID, natsbus.PublisherOptions{}) // the worker: events out
//	defer pub.Close(ctx)    // flushes the queue
//	a.Subscribe(pub.Handle) // never waits on the network
//	t := natsbus.Target{Steering: a.Steering(), FollowUps: a.FollowUps(), Abort: a.Abort}
//	stop, err := bus.Serve(ctx, runID, "worker", func(c natsbus.Command) { // commands in
//		if !c.Apply(t) { /* a prompt: start a run */ }
//	})
//
//	sub, err := bus.Subscribe(ctx, runID, 1, func(seq uint64, e events.Event) { … }) // anywhere
//	err = bus.Send(ctx, runID, natsbus.Command{Type: natsbus.CommandSteer, Text: "focus on tests"})
//
// A subscriber sees every event of the run once and in order, from any
// sequence, then live, across reconnects and server restarts; a command
// reaches the worker at least once and is applied once.
// Events go to agentloop.runs.<run>.events, one message per event,
// commands (prompt, steer, follow-up, abort) to agentloop.runs.<run>.control;
// the stream's name and the subjects' prefix are Options, and EnsureStream
// keeps 7 days and 1 GiB unless Options.Limits say otherwise.
// go run ./examples/distributed runs a worker and a gateway (serving the
// chat page) that talk only through NATS.
//
// Publishing never blocks the run: events go to a bounded queue published
// in order and retried through outages; an event that cannot be published
// (the queue full, the server gone past the retry window) is counted and
// logged, never silently dropped. An event over MaxEventBytes (1 MiB,
// NATS's default payload limit) goes out with its longest strings cut to
// fit, each cut marked and the message flagged (HeaderTrimmed); the run's
// own transcript keeps everything. A worker that restarts for the same run
// id continues its sequence. Ids follow one rule everywhere (1 to 128
// letters, digits, _ and -; CheckRunID); each run and worker pair has its
// own consumer.
//
// A forged message can never silence a subscriber: one far ahead of the
// run is skipped, one a little ahead is undone as soon as the run's own
// sequence goes on from before it, the first message a subscriber sees
// included; both are counted (Subscription.Bad). Give only the worker
// publish rights on its run's subjects (NATS permissions): the bus can
// limit what a forged message does, not tell it from a real one.
//
// Two sequences, two jobs: the Agentloop-Seq header numbers the messages of
// the subject (it dedupes, resumes and finds gaps on the bus); the event's
// envelope (events.Seq, in the data) is the run's own numbering, per run and
// per nested path, which a subscriber checks with events.SeqCheck.
package natsbus

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of Options: the stream and the subjects a Bus uses when its
// Options name none.
const (
	DefaultStream = "AGENTLOOP_RUNS"
	DefaultPrefix = "agentloop.runs"
)

// Bus is a handle on one JetStream stream of agent runs. It holds no state
// of its own beyond its names: make one per stream and share it; its
// methods are safe for concurrent use. Publishing (Publisher), following
// (Subscribe) and control (Send, Serve) are its three jobs.
type Bus struct {
	js     jetstream.JetStream
	stream string
	prefix string
	limits StreamLimits
}

// Options name a Bus's stream and subjects. The zero value means the
// defaults: the stream DefaultStream over the subjects
// "agentloop.runs.<run>.events" and "agentloop.runs.<run>.control".
type Options struct {
	// Stream names the JetStream stream: 1 to MaxIDLength letters, digits,
	// '_' or '-'; "" means DefaultStream.
	Stream string
	// Prefix begins every subject: dot-separated tokens of letters,
	// digits, '_' or '-', at most MaxIDLength bytes; "" means DefaultPrefix.
	// Buses with different prefixes (and streams) share a server without
	// seeing each other's runs.
	Prefix string
	// Limits bound what EnsureStream's stream keeps.
	Limits StreamLimits
}

// StreamLimits bound what the stream keeps. The zero value means the
// defaults.
type StreamLimits struct {
	// MaxAge drops messages older than this; 0 means 7 days.
	MaxAge time.Duration
	// MaxBytes drops the oldest messages past this size; 0 means 1 GiB.
	MaxBytes int64
}

// New returns a Bus on js. It checks the names in opts and does no I/O:
// call EnsureStream once to create the stream.
func New(js jetstream.JetStream, opts Options) (*Bus, error) {
	if js == nil {
		return nil, fmt.Errorf("natsbus: the JetStream client is nil")
	}
	if opts.Stream == "" {
		opts.Stream = DefaultStream
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if err := checkName("stream", opts.Stream); err != nil {
		return nil, err
	}
	if err := checkPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	if opts.Limits.MaxAge <= 0 {
		opts.Limits.MaxAge = 7 * 24 * time.Hour
	}
	if opts.Limits.MaxBytes <= 0 {
		opts.Limits.MaxBytes = 1 << 30
	}
	return &Bus{js: js, stream: opts.Stream, prefix: opts.Prefix, limits: opts.Limits}, nil
}

// EnsureStream creates the Bus's stream (file storage, a two-minute
// duplicate window, Options.Limits) or updates it to the Bus's subjects
// and limits.
func (b *Bus) EnsureStream(ctx context.Context) (jetstream.Stream, error) {
	s, err := b.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       b.stream,
		Subjects:   []string{b.prefix + ".*.events", b.prefix + ".*.control"},
		Storage:    jetstream.FileStorage,
		Duplicates: 2 * time.Minute,
		MaxAge:     b.limits.MaxAge,
		MaxBytes:   b.limits.MaxBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: stream %s: %w", b.stream, err)
	}
	return s, nil
}

// EventsSubject is the subject of a run's events, "<prefix>.<run>.events":
// one message per event, its data the event's wire JSON
// (events.MarshalWire), its headers HeaderType, HeaderRun and HeaderSeq
// (and HeaderTrimmed when it was cut to fit).
func (b *Bus) EventsSubject(runID string) string { return b.prefix + "." + runID + ".events" }

// ControlSubject is the subject of a run's commands,
// "<prefix>.<run>.control": one JSON Command per message.
func (b *Bus) ControlSubject(runID string) string { return b.prefix + "." + runID + ".control" }

// Header names of an event message.
const (
	// HeaderType holds the event's type, as events.Type.
	HeaderType = "Agentloop-Type"
	// HeaderRun holds the run id.
	HeaderRun = "Agentloop-Run"
	// HeaderSeq holds the event's number in the run, from 1, continued by
	// a publisher that restarts for the run. Nats-Msg-Id is
	// "<run>-<seq>", so a publish retried across a server restart is
	// stored once.
	HeaderSeq = "Agentloop-Seq"
)

// MaxIDLength bounds a run or worker id, a stream name and a prefix.
const MaxIDLength = 128

// CheckRunID returns an error unless id is a valid run or worker id: 1 to
// MaxIDLength letters, digits, '_' and '-'. Every method of the package
// checks its ids with it, so an id that passes here works everywhere.
func CheckRunID(id string) error { return checkName("id", id) }

// checkName is CheckRunID for what (an "id" or a "stream").
func checkName(what, name string) error {
	if name == "" || len(name) > MaxIDLength {
		return fmt.Errorf("natsbus: %s %.40q: want 1 to %d letters, digits, '_' or '-'", what, name, MaxIDLength)
	}
	for i := 0; i < len(name); i++ {
		if !nameByte(name[i]) {
			return fmt.Errorf("natsbus: %s %.40q: want 1 to %d letters, digits, '_' or '-'", what, name, MaxIDLength)
		}
	}
	return nil
}

// checkPrefix accepts dot-separated tokens of name bytes: a subject with
// no wildcard and no empty token.
func checkPrefix(p string) error {
	ok := len(p) <= MaxIDLength && p != "" && p[0] != '.' && p[len(p)-1] != '.'
	for i := 0; ok && i < len(p); i++ {
		ok = nameByte(p[i]) || p[i] == '.' && p[i-1] != '.'
	}
	if !ok {
		return fmt.Errorf("natsbus: prefix %.40q: want dot-separated tokens of letters, digits, '_' or '-', at most %d bytes", p, MaxIDLength)
	}
	return nil
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
