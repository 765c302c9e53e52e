// Package sse serves a running agent's events to browsers as Server-Sent
// Events.
//
// A [Broker] subscribes to a run (or a whole conversation) as an event
// handler, keeps the encoded events in a bounded in-memory replay buffer,
// and serves them over HTTP: one SSE event per agent event, named after the
// reference's event type (agent_start, message_update, ...), its data the
// event's JSON, its id a sequence number. A browser that reconnects sends
// Last-Event-ID and resumes after that event, without loss or duplicates, as
// long as the buffer still holds it; otherwise it first receives a "gap"
// event saying how many events it missed.
//
// Publishing never waits for clients: a client too slow to keep up falls
// behind in the buffer, not the run.
package sse

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentloop/agentloop/events"
)

// Defaults for a Broker's settings.
const (
	DefaultCapacity     = 4096
	DefaultHeartbeat    = 15 * time.Second
	DefaultWriteTimeout = 30 * time.Second
)

// Broker buffers events and serves them as SSE. Create one with New. It is
// safe for concurrent use.
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

	mu     sync.Mutex
	buf    []entry // ring of the last cap events
	start  int     // index in buf of the oldest entry
	next   uint64  // id of the next event (ids start at 1)
	wake   chan struct{}
	closed bool
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
	return &Broker{buf: make([]entry, 0, capacity), next: 1, wake: make(chan struct{})}
}

// Publish records an event; it is an events.Handler. It never blocks on
// clients. Events that fail to encode are dropped.
func (b *Broker) Publish(_ context.Context, e events.Event) {
	data, err := events.Marshal(e)
	if err != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	en := entry{id: b.next, name: string(e.Type()), data: data}
	b.next++
	if len(b.buf) < cap(b.buf) {
		b.buf = append(b.buf, en)
	} else {
		b.buf[b.start] = en
		b.start = (b.start + 1) % len(b.buf)
	}
	if b.CloseOnAgentEnd && e.Type() == events.TypeAgentEnd {
		b.closed = true
	}
	close(b.wake)
	b.wake = make(chan struct{})
}

// Close ends every stream once its client has received what was published.
func (b *Broker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		close(b.wake)
		b.wake = make(chan struct{})
	}
}

// LastID returns the id of the newest event, 0 before the first.
func (b *Broker) LastID() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.next - 1
}

// after returns the buffered events with ids above id, how many events
// after id the buffer no longer holds, and a channel closed on the next
// publish. closed reports that nothing more will be published, so out is
// the rest of the stream.
func (b *Broker) after(id uint64) (out []entry, missed uint64, wake <-chan struct{}, closed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.buf)
	if n > 0 {
		oldest := b.buf[b.start].id
		if id+1 < oldest {
			missed = oldest - id - 1
		}
		for i := range n {
			if en := b.buf[(b.start+i)%n]; en.id > id {
				out = append(out, en)
			}
		}
	}
	return out, missed, b.wake, b.closed
}

// ServeHTTP streams events to one client until it goes away or the broker
// closes. It resumes after the Last-Event-ID header, or after the
// "lastEventId" query parameter (for a page that reloads and remembers its
// place); without either it starts at the oldest buffered event.
func (b *Broker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	last := lastEventID(r)
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
	for {
		// A client that stops reading is dropped instead of holding this
		// goroutine forever (if the server supports deadlines).
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		batch, missed, wake, closed := b.after(last)
		if missed > 0 {
			fmt.Fprintf(w, "event: gap\ndata: {\"missed\":%d}\n\n", missed)
		}
		for _, en := range batch {
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", en.id, en.name, en.data)
			last = en.id
		}
		if err := rc.Flush(); err != nil || closed {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-wake:
		case <-ticker.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return
			}
		}
	}
}

func lastEventID(r *http.Request) uint64 {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("lastEventId")
	}
	id, _ := strconv.ParseUint(v, 10, 64)
	return id
}
