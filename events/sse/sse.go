// Package sse serves a running agent's events to browsers as Server-Sent
// Events.
//
// A [Broker] subscribes to a run (or a whole conversation) as an event
// handler, keeps the encoded events in a bounded in-memory replay buffer,
// and serves them over HTTP: one SSE event per agent event, named after the
// reference's event type (agent_start, message_update, ...), its data the
// event's wire JSON (events.MarshalWire: a message_update carries only its
// change), its id "EPOCH-SEQ": a random epoch per Broker (a restarted
// server's ids never look like the last one's) and a sequence number. A
// browser that reconnects sends Last-Event-ID and resumes after that event,
// without loss or duplicates, as long as the buffer still holds it;
// otherwise it first receives a "gap" event saying how many events it
// missed. An id from another epoch, or past the newest event, gets a gap
// event too, and then everything the buffer holds: never silence.
//
// The buffer is bounded by count and by bytes (MaxBytes), and the number of
// clients by MaxClients (a 503 past it).
//
// Publishing never waits for clients: a client too slow to keep up falls
// behind in the buffer, not the run.
package sse

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
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
	// MaxBytes bounds the encoded events the buffer keeps; 0 means
	// DefaultMaxBytes. The oldest go first.
	MaxBytes int
	// MaxClients bounds the streams served at once; 0 means
	// DefaultMaxClients. Past it a client gets 503.
	MaxClients int

	epoch   string // this Broker's part of every id
	mu      sync.Mutex
	buf     []entry // ring of the last cap events
	start   int     // index in buf of the oldest entry
	bytes   int     // encoded bytes in buf
	next    uint64  // sequence of the next event (from 1)
	clients int
	wake    chan struct{}
	closed  bool
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
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return &Broker{epoch: hex.EncodeToString(b), buf: make([]entry, 0, capacity), next: 1, wake: make(chan struct{})}
}

// Publish records an event; it is an events.Handler. It never blocks on
// clients. Events that fail to encode are dropped.
func (b *Broker) Publish(_ context.Context, e events.Event) {
	data, err := events.MarshalWire(e)
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
		b.bytes -= len(b.buf[b.start].data)
		b.buf[b.start] = en
		b.start = (b.start + 1) % len(b.buf)
	}
	b.bytes += len(data)
	b.trim()
	if b.CloseOnAgentEnd && e.Type() == events.TypeAgentEnd {
		b.closed = true
	}
	close(b.wake)
	b.wake = make(chan struct{})
}

// trim drops the oldest events while the buffer holds more than MaxBytes
// (always keeping the newest). b.mu is held.
func (b *Broker) trim() {
	max := b.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	for b.bytes > max && len(b.buf) > 1 {
		// Rebuild the ring without its oldest entry.
		n := len(b.buf)
		b.bytes -= len(b.buf[b.start].data)
		kept := make([]entry, 0, cap(b.buf))
		for i := 1; i < n; i++ {
			kept = append(kept, b.buf[(b.start+i)%n])
		}
		b.buf, b.start = kept, 0
	}
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

// LastID returns the sequence of the newest event, 0 before the first.
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
// place). Without either (a page load), it replays the buffer compacted:
// the updates of messages that ended are left out (their message_end
// carries them whole) and the consecutive deltas of the message in flight
// are merged, so a reload downloads in proportion to the transcript, not to
// the number of events; then it follows live.
func (b *Broker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !b.admit() {
		http.Error(w, "too many clients", http.StatusServiceUnavailable)
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
	fresh := last == 0 // a first connection (or a foreign id): replay compacted
	fmt.Fprint(w, "retry: 1000\n\n")
	if foreign {
		fmt.Fprint(w, "event: gap\ndata: {\"missed\":null,\"reason\":\"the last event id is not one of this server's; everything kept follows\"}\n\n")
	}
	for {
		// A client that stops reading is dropped instead of holding this
		// goroutine forever (if the server supports deadlines).
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		batch, missed, wake, closed := b.after(last)
		if fresh {
			batch, fresh = compact(batch), false
		}
		if missed > 0 {
			fmt.Fprintf(w, "event: gap\ndata: {\"missed\":%d}\n\n", missed)
		}
		for _, en := range batch {
			fmt.Fprintf(w, "id: %s-%d\nevent: %s\ndata: %s\n\n", b.epoch, en.id, en.name, en.data)
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

// admit counts a client in, unless MaxClients are being served.
func (b *Broker) admit() bool {
	max := b.MaxClients
	if max <= 0 {
		max = DefaultMaxClients
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.clients >= max {
		return false
	}
	b.clients++
	return true
}

func (b *Broker) leave() {
	b.mu.Lock()
	b.clients--
	b.mu.Unlock()
}

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

// compact shortens a replay for a client that starts from nothing: it
// drops the message_update events of every message whose message_end
// follows, and merges runs of deltas of one block of the message still in
// flight into one delta (carrying the id of the last). The client sees the
// same messages with far fewer events. It costs one pass over the batch.
func compact(batch []entry) []entry {
	lastEnd := -1
	for i, en := range batch {
		if en.name == string(events.TypeMessageEnd) {
			lastEnd = i
		}
	}
	out := make([]entry, 0, len(batch))
	var run struct {
		head  wireDelta // the first delta of the run
		text  strings.Builder
		last  uint64 // the id of the run's last delta
		count int
	}
	flush := func() {
		if run.count == 0 {
			return
		}
		run.head.AssistantMessageEvent.Delta = run.text.String()
		if data, err := json.Marshal(run.head); err == nil {
			out = append(out, entry{id: run.last, name: string(events.TypeMessageUpdate), data: data})
		}
		run.count = 0
		run.text.Reset()
	}
	for i, en := range batch {
		if en.name != string(events.TypeMessageUpdate) {
			flush()
			out = append(out, en)
			continue
		}
		if i < lastEnd {
			continue // its message ended: message_end has it whole
		}
		var d wireDelta
		if json.Unmarshal(en.data, &d) != nil || !strings.HasSuffix(d.AssistantMessageEvent.Type, "_delta") {
			flush()
			out = append(out, en)
			continue
		}
		e := d.AssistantMessageEvent
		if run.count > 0 && (e.Type != run.head.AssistantMessageEvent.Type || e.ContentIndex != run.head.AssistantMessageEvent.ContentIndex) {
			flush()
		}
		if run.count == 0 {
			run.head = d
		}
		run.text.WriteString(e.Delta)
		run.last = en.id
		run.count++
	}
	flush()
	return out
}

// wireDelta is the part of a wire message_update that merging reads.
type wireDelta struct {
	Type                  events.Type `json:"type"`
	V                     int         `json:"v"`
	AssistantMessageEvent struct {
		Type         string `json:"type"`
		ContentIndex int    `json:"contentIndex"`
		Delta        string `json:"delta"`
	} `json:"assistantMessageEvent"`
}
