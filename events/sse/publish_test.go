package sse

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
	"github.com/agentloop/agentloop/tools"
)

// stall is a tool argument whose encoding, once armed, waits to be
// released: a snapshot that takes as long to encode as the test says.
type stall struct {
	armed   atomic.Bool
	once    sync.Once
	entered chan struct{} // closed when an armed encoding starts
	release chan struct{}
}

func (s *stall) MarshalJSON() ([]byte, error) {
	if s.armed.Load() {
		s.once.Do(func() { close(s.entered) })
		<-s.release
	}
	return []byte(`"stalled"`), nil
}

// within fails the test unless done is closed within a generous bound:
// the thing it waits for takes microseconds, and blocks forever if broken.
func within(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
}

// TestPublishNeverWaitsOnASnapshot: while a connecting client's snapshot
// is being encoded (here, forever until released), Publish, LastID and a
// client refused past MaxClients all go on; the client then gets the
// snapshot and every event published meanwhile, in order.
func TestPublishNeverWaitsOnASnapshot(t *testing.T) {
	b := New(1000)
	b.MaxClients = 1
	srv := httptest.NewServer(b)
	defer srv.Close()
	defer b.Close()
	st := &stall{entered: make(chan struct{}), release: make(chan struct{})}
	released := sync.OnceFunc(func() { close(st.release) })
	defer released()
	ctx := context.Background()
	b.Handle(ctx, events.AgentStart{})
	b.Handle(ctx, events.ToolExecutionStart{ToolCallID: "s", ToolName: "t", Args: map[string]any{"x": st}})
	st.armed.Store(true) // from here on, encoding the snapshot blocks

	type result struct {
		c   *client
		err error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Get(srv.URL) // its headers come with the snapshot
		if err != nil {
			got <- result{err: err}
			return
		}
		got <- result{c: &client{resp: resp, sc: bufio.NewScanner(resp.Body)}}
	}()
	within(t, st.entered, "the client never started encoding its snapshot")

	published := make(chan struct{})
	go func() {
		for i := range 100 {
			b.Handle(ctx, start(fmt.Sprint(i)))
		}
		close(published)
	}()
	within(t, published, "Publish waited on a client encoding its snapshot")
	if b.LastID() != 102 {
		t.Fatalf("last id %d", b.LastID())
	}
	refused := make(chan struct{})
	go func() {
		defer close(refused)
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !resp.Close {
			t.Errorf("a client past MaxClients: %d, close %v", resp.StatusCode, resp.Close)
		}
	}()
	within(t, refused, "a refused client waited on a client encoding its snapshot")

	released()
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.c.resp.Body.Close()
	snap := r.c.event(t)
	if snap.name != "snapshot" || snap.id != "2" || !strings.Contains(snap.data, `"x":"stalled"`) {
		t.Fatalf("first frame %+v", snap)
	}
	for i := range 100 {
		if f := r.c.event(t); f.id != strconv.Itoa(3+i) {
			t.Fatalf("event %d: %+v", i, f)
		}
	}
}

// TestClientsTakeNoPublishLock: while the lock Publish takes is held, a
// client connects and gets its snapshot, and one past MaxClients gets 503.
func TestClientsTakeNoPublishLock(t *testing.T) {
	b := New(4)
	b.MaxClients = 1
	srv := httptest.NewServer(b)
	defer srv.Close()
	defer b.Close()
	b.Handle(context.Background(), start("a"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.mu.Lock()
	locked := true
	defer func() {
		if locked {
			b.mu.Unlock()
		}
	}()
	served := make(chan struct{})
	go func() {
		defer close(served)
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		c := &client{resp: resp, sc: bufio.NewScanner(resp.Body)}
		if f, ok := c.next(); !ok || f.name != "snapshot" || f.id != "1" {
			t.Errorf("first frame %+v", f)
		}
		resp2, err := http.Get(srv.URL)
		if err != nil {
			t.Error(err)
			return
		}
		resp2.Body.Close()
		if resp2.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("past MaxClients: %d", resp2.StatusCode)
		}
	}()
	within(t, served, "a client waited for the lock Publish takes")
	locked = false
	b.mu.Unlock()
}

// conversationEvents publishes n rounds of a run's events: a message
// streamed in pieces and ended, a tool call started, updated and ended.
func conversationEvents(ctx context.Context, b *Broker, n int) {
	b.Handle(ctx, events.AgentStart{})
	for i := range n {
		bl := kit.NewBuilder(providers.Model{ID: "m"})
		b.Handle(ctx, events.MessageStart{Message: *bl.Start().Message})
		b.Handle(ctx, events.MessageUpdate{Stream: bl.TextStart()})
		for range 5 {
			b.Handle(ctx, events.MessageUpdate{Stream: bl.TextDelta(strings.Repeat("x", 40))})
		}
		b.Handle(ctx, events.MessageUpdate{Stream: bl.TextEnd()})
		b.Handle(ctx, events.MessageEnd{Message: *bl.Done(providers.StopReasonStop, providers.Usage{}).Message})
		id := fmt.Sprint(i)
		b.Handle(ctx, events.ToolExecutionStart{ToolCallID: id, ToolName: "t", Args: map[string]any{"i": i}})
		b.Handle(ctx, events.ToolExecutionUpdate{ToolCallID: id, ToolName: "t", Partial: tools.TextResult("half")})
		b.Handle(ctx, events.ToolExecutionEnd{ToolCallID: id, ToolName: "t"})
	}
	b.Handle(ctx, events.AgentEnd{})
}

// TestCrowdConnectingWhilePublishing: clients arrive all at once while a
// run publishes (the messages kept dropping past MaxBytes, so snapshots
// share parts the Broker moves on from); each one admitted gets a snapshot
// that decodes and then every later event once, in order, up to the last;
// the rest get 503 and a closed connection.
func TestCrowdConnectingWhilePublishing(t *testing.T) {
	b := New(64)
	b.MaxBytes = 4 << 10
	b.MaxClients = 8
	srv := httptest.NewServer(b)
	defer srv.Close()
	const clients = 32
	var wg sync.WaitGroup
	var admitted, refused atomic.Int64
	startLine := make(chan struct{})
	lasts := make(chan uint64, clients)
	for range clients {
		wg.Go(func() {
			<-startLine
			resp, err := http.Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable {
				refused.Add(1)
				if !resp.Close {
					t.Error("a refused client's connection stays open")
				}
				return
			}
			admitted.Add(1)
			last, err := checkStream(resp.Body)
			if err != nil {
				t.Error(err)
			}
			lasts <- last
		})
	}
	close(startLine)
	conversationEvents(context.Background(), b, 40)
	b.Close()
	wg.Wait()
	if admitted.Load()+refused.Load() != clients || admitted.Load() == 0 {
		t.Fatalf("%d admitted, %d refused", admitted.Load(), refused.Load())
	}
	close(lasts)
	for last := range lasts {
		if last != b.LastID() {
			t.Errorf("a stream ended at %d of %d", last, b.LastID())
		}
	}
	t.Logf("%d admitted, %d refused", admitted.Load(), refused.Load())
}

// checkStream reads a stream to its end: a snapshot (or a gap and a
// snapshot), then consecutive ids; it returns the last id.
func checkStream(r io.Reader) (uint64, error) {
	c := &client{sc: bufio.NewScanner(r)}
	c.sc.Buffer(nil, 1<<20)
	var last uint64
	seen := false
	for {
		f, ok := c.next()
		if !ok {
			break
		}
		if f.name == "" || f.name == "gap" {
			continue
		}
		id, err := strconv.ParseUint(f.id, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("frame %+v: %v", f, err)
		}
		if f.name == "snapshot" {
			if !json.Valid([]byte(f.data)) {
				return 0, fmt.Errorf("snapshot %d does not decode: %.200s", id, f.data)
			}
			if seen && id < last {
				return 0, fmt.Errorf("snapshot %d after event %d", id, last)
			}
		} else if !seen || id != last+1 {
			return 0, fmt.Errorf("event %d (%s) after %d", id, f.name, last)
		}
		seen, last = true, id
	}
	if !seen {
		return 0, fmt.Errorf("no events")
	}
	return last, c.sc.Err()
}

// TestSnapshotEncodesAsJSONWould: the snapshot built by copying the
// encoded messages is byte for byte what encoding the frame gives, with
// and without messages, tools and a message in flight.
func TestSnapshotEncodesAsJSONWould(t *testing.T) {
	ctx := context.Background()
	b := New(0)
	check := func(when string) {
		t.Helper()
		s := b.now.Load().snap
		f := s.frame
		if f.Messages == nil {
			f.Messages = []json.RawMessage{}
		}
		f.Tools = s.runningTools()
		if m := s.streaming.Partial(); m != nil {
			f.Streaming = m
		}
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.encode(); string(got) != string(want) {
			t.Fatalf("%s:\n got %s\nwant %s", when, got, want)
		}
	}
	check("empty")
	b.Handle(ctx, events.AgentStart{})
	b.Handle(ctx, events.MessageEnd{Message: providers.NewUserText("<b>&\u2028 \"quoted\" é")})
	b.Handle(ctx, events.ToolExecutionStart{ToolCallID: "a", ToolName: "t", Args: map[string]any{"html": "<script>"}})
	check("a message and a tool")
	bl := kit.NewBuilder(providers.Model{ID: "m"})
	b.Handle(ctx, events.MessageStart{Message: *bl.Start().Message})
	b.Handle(ctx, events.MessageUpdate{Stream: bl.TextStart()})
	b.Handle(ctx, events.MessageUpdate{Stream: bl.TextDelta("so <far>")})
	check("a message in flight")
	b.Handle(ctx, events.AgentEnd{})
	check("after the run")
}

// TestSnapshotsKeepTheirToolCalls: every snapshot, encoded long after
// later events started, updated and ended calls, lists the calls running
// at its own event, in the order they started; the log of calls stays in
// proportion to the calls running.
func TestSnapshotsKeepTheirToolCalls(t *testing.T) {
	ctx := context.Background()
	b := New(0)
	type call struct {
		id      string
		partial string
	}
	var model []call // running, in start order
	var snaps []*snapshot
	var want []string
	for i := range 600 {
		id := fmt.Sprint(i % 37)
		at := slices.IndexFunc(model, func(c call) bool { return c.id == id })
		switch {
		case i%200 == 199:
			b.Handle(ctx, events.AgentEnd{})
			model = nil
		case at < 0:
			b.Handle(ctx, events.ToolExecutionStart{ToolCallID: id, ToolName: "t"})
			model = append(model, call{id: id})
		case i%3 == 0:
			b.Handle(ctx, events.ToolExecutionEnd{ToolCallID: id, ToolName: "t"})
			model = slices.Delete(model, at, at+1)
		default:
			p := fmt.Sprint("step ", i)
			b.Handle(ctx, events.ToolExecutionUpdate{ToolCallID: id, ToolName: "t", Partial: tools.TextResult(p)})
			model[at].partial = p
		}
		snaps = append(snaps, b.now.Load().snap)
		want = append(want, fmt.Sprint(model))
		b.mu.Lock()
		logged, live := len(b.conv.tools), len(b.conv.live)
		b.mu.Unlock()
		if logged > 2*live+2 {
			t.Fatalf("event %d: %d records for %d calls running", i, logged, live)
		}
	}
	for i, s := range snaps {
		var f snapshotFrame
		if err := json.Unmarshal(s.encode(), &f); err != nil {
			t.Fatal(err)
		}
		var got []call
		for _, r := range f.Tools {
			c := call{id: r.ID}
			if r.Partial != nil && len(r.Partial.Content) == 1 {
				if text, ok := r.Partial.Content[0].(providers.Text); ok {
					c.partial = text.Text
				}
			}
			got = append(got, c)
		}
		if fmt.Sprint(got) != want[i] {
			t.Fatalf("snapshot %d:\n got %v\nwant %s", i, got, want[i])
		}
	}
}
