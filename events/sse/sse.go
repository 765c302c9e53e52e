// Package sse serves a running agent's events to browsers as Server-Sent
// Events, resumable after a reload or a dropped connection.
//
//	broker := sse.New(20000)   // replays the last 20,000 events
//	a.Subscribe(broker.Handle) // never waits for a browser
//	mux.Handle("GET /api/events", broker)
//
// Each agent event is one SSE event named after its type, its data the
// event's wire JSON (events.MarshalWire). A page that loads gets the
// conversation so far in one snapshot, then the events live; one that
// reconnects resumes where it was (Broker.ServeHTTP says how). Package
// webchat adds a chat page, and the Guard that keeps a local page to its
// owner.
//
// The snapshot (the messages so far, the one in flight, the tool calls
// running) is kept by the broker and bounded by bytes, so a reload costs
// the size of the transcript, not the number of events. The replay buffer,
// bounded by count and bytes, lets a client resume with Last-Event-ID
// without loss or duplicates; ids carry a per-server epoch, and an id from
// another server or out of range gets a gap notice and a fresh snapshot,
// never silence. Heartbeats keep connections open, a write timeout drops a
// stuck client, and clients past Broker.MaxClients get 503. Publishing
// never waits for a client: clients read the broker's state (an immutable
// value per event) without a lock, and encode and write outside anything
// Handle holds.
//
// Version 2 of the wire form carries each event's envelope: its place in
// its run, its path (a nested run's events stream live but are not folded
// into the snapshot), its model attempt (a superseded attempt's text is
// dropped); see events.Envelope.
package sse

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop/events"
)

// Defaults for a Broker's settings.
const (
	DefaultCapacity     = 4096
	DefaultHeartbeat    = 15 * time.Second
	DefaultWriteTimeout = 30 * time.Second
	DefaultMaxBytes     = 64 << 20
	DefaultMaxClients   = 256
)

// Broker buffers events and serves them as SSE. Create one with New. It is
// safe for concurrent use.
//
// The buffer is bounded by count and by bytes (MaxBytes), as are the
// messages the snapshot keeps, and the number of clients by MaxClients.
// Handle never waits for clients: each event leaves the Broker's state as
// a value that never changes, which clients read with one atomic load and
// encode and write outside any lock Handle takes, so a client too slow to
// keep up falls behind in the buffer, not the run.
type Broker struct {
	// Heartbeat is the interval of the comment lines that keep idle
	// connections open through proxies; 0 means DefaultHeartbeat.
	Heartbeat time.Duration
	// CloseOnAgentEnd ends every stream after an agent_end event, for a
	// Broker that serves a single run.
	CloseOnAgentEnd bool
	// WriteTimeout drops a client that has not taken a write for this long
	// (its connection is stuck); 0 means DefaultWriteTimeout.
	WriteTimeout time.Duration
	// MaxBytes bounds the encoded events the buffer keeps, and apart from
	// them the messages a snapshot holds; 0 means DefaultMaxBytes. The
	// oldest go first.
	MaxBytes int
	// MaxClients bounds the streams served at once; 0 means
	// DefaultMaxClients. Past it a client gets 503.
	MaxClients int

	epoch   string       // this Broker's part of every id
	clients atomic.Int64 // the streams being served
	now     atomic.Pointer[state]

	// mu is taken by Handle and Close only, never by a client.
	mu    sync.Mutex
	buf   window[entry] // the kept events, oldest first
	limit int           // how many events buf keeps
	bytes int           // encoded bytes of the kept events
	next  uint64        // sequence of the next event (from 1)
	conv  conversation
}

// state is the Broker as of one event. It never changes: clients read it
// without a lock, and the next event replaces it.
type state struct {
	last   uint64        // the newest event's id, 0 before the first
	events []entry       // the events kept, oldest first
	snap   *snapshot     // the conversation as of last
	wake   chan struct{} // closed when a new state replaces this one
	closed bool          // nothing more will be published
}

type entry struct {
	id   uint64
	name string
	data []byte
}

// New returns a Broker that keeps the last capacity events (0 means
// DefaultCapacity) for clients that connect late or reconnect.
func New(capacity int) *Broker {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	id := make([]byte, 4)
	_, _ = rand.Read(id)
	b := &Broker{epoch: hex.EncodeToString(id), limit: capacity, next: 1}
	b.now.Store(&state{snap: b.conv.snapshot(0), wake: make(chan struct{})})
	return b
}

// Handle records an event; it is an events.Handler. It never blocks on
// clients. Events that fail to encode are dropped.
func (b *Broker) Handle(_ context.Context, e events.Event) {
	data, err := events.MarshalWire(e)
	if err != nil {
		return
	}
	msg := encodeMessage(e)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.now.Load().closed {
		return
	}
	en := entry{id: b.next, name: string(e.Type()), data: data}
	b.next++
	b.buf.push(en)
	b.bytes += len(data)
	b.trim()
	b.conv.add(en.id, e, msg, b.maxBytes())
	b.advance(b.CloseOnAgentEnd && e.Type() == events.TypeAgentEnd)
}

// advance replaces the state clients read with the one as of the newest
// event and wakes them. b.mu is held.
func (b *Broker) advance(closed bool) {
	last := b.next - 1
	old := b.now.Load()
	snap := old.snap
	if snap.at != last {
		snap = b.conv.snapshot(last)
	}
	b.now.Store(&state{last: last, events: b.buf.kept(), snap: snap, wake: make(chan struct{}), closed: closed})
	close(old.wake)
}

// trim drops the oldest events while the buffer holds more than its
// count or MaxBytes (always keeping the newest). Each drop costs O(1),
// amortized (see window). b.mu is held.
func (b *Broker) trim() {
	max := b.maxBytes()
	for kept := b.buf.len(); kept > 1 && (kept > b.limit || b.bytes > max); kept-- {
		size := len(b.buf.oldest().data)
		b.bytes -= size
		b.buf.drop(size, max)
	}
}

func (b *Broker) maxBytes() int {
	if b.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return b.MaxBytes
}

// Close ends every stream once its client has received what was published.
func (b *Broker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.now.Load().closed {
		b.advance(true)
	}
}

// LastID returns the sequence of the newest event, 0 before the first.
func (b *Broker) LastID() uint64 { return b.now.Load().last }

// pending is what a stream has to send next.
type pending struct {
	snapshot *snapshot // if asked for
	events   []entry   // the events after it (or after the client's id); shared, never changed
	missed   uint64    // events after the client's id no longer kept
	wake     <-chan struct{}
	closed   bool // nothing more will be published: this is the rest
}

// pending returns what follows event id: with snap, a snapshot of the
// conversation (as of the newest event) and nothing before it; otherwise
// the buffered events above id and how many of those the buffer no longer
// holds. Either way, a channel closed on the next publish.
//
// It reads the current state, without a lock: nothing a client does
// (encoding the snapshot, writing to a slow connection) holds up Handle.
func (b *Broker) pending(id uint64, snap bool) (p pending) {
	s := b.now.Load()
	p.wake, p.closed = s.wake, s.closed
	if snap {
		p.snapshot = s.snap
		id = s.snap.at
	}
	// Ids are consecutive, so the events after id start at a known place.
	if kept := s.events; len(kept) > 0 {
		switch oldest := kept[0].id; {
		case id+1 < oldest:
			p.missed = oldest - id - 1
			p.events = kept
		case id+1-oldest < uint64(len(kept)):
			p.events = kept[id+1-oldest:]
		}
	}
	return p
}

// ServeHTTP streams events to one client until it goes away or the broker
// closes. It resumes after the Last-Event-ID header, or after the
// "lastEventId" query parameter (for a page that reloads and remembers its
// place). Without either (a page load), or with one it cannot resume from,
// it starts with a snapshot of the conversation; then it follows live.
//
// Each agent event is one SSE event named after the reference's event type
// (agent_start, message_update, ...), its data the event's wire JSON (a
// message_update carries only its change), its id "EPOCH-SEQ": a random
// epoch per Broker (a restarted server's ids never look like the last
// one's) and a sequence number. The snapshot is an event named "snapshot":
//
//	{"type": "snapshot", "v": 1,
//	 "messages":  [the messages that ended, oldest first],
//	 "omitted":   how many older messages were dropped to stay within MaxBytes,
//	 "streaming": the message in flight so far, or null,
//	 "running":   whether a run is going on,
//	 "tools":     [{"toolCallId", "toolName", "args", "partialResult"?} of the calls running]}
//
// so a reload downloads in proportion to the transcript, not to the number
// of events. An id the buffer no longer holds, one from another epoch, one
// past the newest event or garbage gets a "gap" event saying so and a fresh
// snapshot: never silence. Past MaxClients a client gets 503.
func (b *Broker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !b.admit() {
		refuse(w, "too many clients", http.StatusServiceUnavailable)
		return
	}
	defer b.leave()
	rc := http.NewResponseController(w)
	last, foreign := b.lastEventID(r)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	beat := b.Heartbeat
	if beat <= 0 {
		beat = DefaultHeartbeat
	}
	writeTimeout := b.WriteTimeout
	if writeTimeout <= 0 {
		writeTimeout = DefaultWriteTimeout
	}
	ticker := time.NewTicker(beat)
	defer ticker.Stop()
	fmt.Fprint(w, "retry: 1000\n\n")
	if foreign {
		fmt.Fprint(w, "event: gap\ndata: {\"missed\":null,\"reason\":\"the last event id is not one of this server's; a snapshot follows\"}\n\n")
	}
	fresh := last == 0 // a first connection, or a foreign id
	for {
		// A client that stops reading is dropped instead of holding this
		// goroutine forever (if the server supports deadlines).
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		p := b.pending(last, fresh)
		if p.missed > 0 && !fresh {
			fmt.Fprintf(w, "event: gap\ndata: {\"missed\":%d,\"reason\":\"the events after the last event id are no longer kept; a snapshot follows\"}\n\n", p.missed)
			p = b.pending(last, true)
		}
		if p.snapshot != nil {
			last = p.snapshot.at
			b.write(w, last, "snapshot", p.snapshot.encode())
		}
		fresh = false
		for _, en := range p.events {
			b.write(w, en.id, en.name, en.data)
			last = en.id
		}
		if err := rc.Flush(); err != nil || p.closed {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-p.wake:
		case <-ticker.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return
			}
		}
	}
}

// write sends one event. The data goes out as it is, not through a
// formatting buffer: a snapshot may be megabytes.
func (b *Broker) write(w io.Writer, id uint64, name string, data []byte) {
	fmt.Fprintf(w, "id: %s-%d\nevent: %s\ndata: ", b.epoch, id, name)
	_, _ = w.Write(data)
	_, _ = io.WriteString(w, "\n\n")
}

// admit counts a client in, unless MaxClients are being served.
func (b *Broker) admit() bool {
	max := int64(b.MaxClients)
	if max <= 0 {
		max = DefaultMaxClients
	}
	for {
		n := b.clients.Load()
		if n >= max {
			return false
		}
		if b.clients.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (b *Broker) leave() { b.clients.Add(-1) }

// lastEventID reads where a client resumes: the sequence of its
// Last-Event-ID (or lastEventId query parameter), 0 for a fresh start.
// foreign reports an id that is not this Broker's: another epoch, a
// sequence past the newest event, or no id of ours at all.
func (b *Broker) lastEventID(r *http.Request) (seq uint64, foreign bool) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("lastEventId")
	}
	if v == "" {
		return 0, false
	}
	epoch, s, ok := strings.Cut(v, "-")
	seq, err := strconv.ParseUint(s, 10, 64)
	if !ok || err != nil || epoch != b.epoch || seq > b.LastID() {
		return 0, true
	}
	return seq, false
}

// refuse answers a request with an error at once and closes the
// connection, giving a body the request declared half a second more to
// arrive (so a client that sends one reads the answer, not a reset) and
// never waiting for one that is not sent.
func refuse(w http.ResponseWriter, msg string, code int) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(500 * time.Millisecond))
}
