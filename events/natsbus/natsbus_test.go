package natsbus_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/events/natsbus"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// embedded is a real nats-server with JetStream, in process, on a fixed
// port so it can be restarted in place.
type embedded struct {
	t    *testing.T
	opts server.Options
	srv  *server.Server
}

func startServer(t *testing.T) *embedded {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	e := &embedded{t: t, opts: server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: t.TempDir(), NoSigs: true}}
	e.start()
	t.Cleanup(e.stop)
	return e
}

func (e *embedded) start() {
	srv, err := server.NewServer(&e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		e.t.Fatal("nats-server did not start")
	}
	e.srv = srv
}

func (e *embedded) stop() {
	if e.srv != nil {
		e.srv.Shutdown()
		e.srv.WaitForShutdown()
		e.srv = nil
	}
}

func (e *embedded) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", e.opts.Port) }

// connect returns a Bus with the default names on a client of its own.
func (e *embedded) connect(t *testing.T) *natsbus.Bus {
	t.Helper()
	return newBus(t, e.jetstream(t), natsbus.Options{})
}

// newBus returns a Bus on js whose stream exists.
func newBus(t *testing.T, js jetstream.JetStream, opts natsbus.Options) *natsbus.Bus {
	t.Helper()
	bus, err := natsbus.New(js, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bus.EnsureStream(context.Background()); err != nil {
		t.Fatal(err)
	}
	return bus
}

// jetstream returns a JetStream client that reconnects forever.
func (e *embedded) jetstream(t *testing.T) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(e.url(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// collector rebuilds a transcript from events received over NATS.
type collector struct {
	mu     sync.Mutex
	seqs   []uint64
	types  []string
	msgs   []providers.Message
	ended  chan struct{}
	endsAt int // close ended after this many agent_end events
	ends   int
}

func newCollector(ends int) *collector { return &collector{ended: make(chan struct{}), endsAt: ends} }

func (c *collector) handle(seq uint64, e events.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seqs = append(c.seqs, seq)
	c.types = append(c.types, string(e.Type()))
	if me, ok := e.(events.MessageEnd); ok {
		c.msgs = append(c.msgs, me.Message)
	}
	if e.Type() == events.TypeAgentEnd {
		if c.ends++; c.ends == c.endsAt {
			close(c.ended)
		}
	}
}

func (c *collector) wait(t *testing.T) {
	t.Helper()
	select {
	case <-c.ended:
	case <-time.After(60 * time.Second):
		t.Fatal("no agent_end arrived")
	}
}

// contiguous checks that sequence numbers run from first to last with no
// gap and no repeat.
func (c *collector) contiguous(t *testing.T, first uint64) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range c.seqs {
		if s != first+uint64(i) {
			t.Fatalf("event %d has sequence %d, want %d", i, s, first+uint64(i))
		}
	}
}

func sameTranscript(t *testing.T, got, want []providers.Message) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("rebuilt transcript differs:\n got %d messages\nwant %d messages", len(got), len(want))
	}
}

// subscribeAll follows the run's events from the start until the test ends.
func subscribeAll(t *testing.T, bus *natsbus.Bus, run string) (*collector, *natsbus.Subscription) {
	t.Helper()
	col := newCollector(1)
	sub, err := bus.Subscribe(context.Background(), run, 1, col.handle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Stop)
	return col, sub
}

// prompt starts a run in the background.
func prompt(a *agent.Agent) <-chan error {
	done := make(chan error, 1)
	go func() { done <- a.Prompt(context.Background(), providers.NewUserText("go")) }()
	return done
}

type labelArgs struct {
	Label string `json:"label"`
}

// worker builds an agent whose events go to NATS and whose commands come
// from it; release lets its slow tool finish.
func worker(t *testing.T, bus *natsbus.Bus, run string, release <-chan struct{}, started chan<- struct{}) (*agent.Agent, *natsbus.Publisher) {
	t.Helper()
	var once sync.Once
	slow := tools.Must(tools.New(tools.Config{Name: "slow"}, func(ctx context.Context, a labelArgs) (tools.Result, error) {
		up := func(p tools.Result) { tools.ReportProgress(ctx, p) }
		once.Do(func() { close(started) })
		up(tools.TextResult("waiting"))
		select {
		case <-release:
		case <-ctx.Done():
			return tools.Result{}, ctx.Err()
		}
		return tools.TextResult("slow " + a.Label), nil
	}))
	p := &faux.Provider{}
	p.Default = func(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
		switch last := req.Messages[len(req.Messages)-1].(type) {
		case providers.UserMessage:
			if len(req.Messages) == 1 {
				return faux.Reply(faux.Text("working"), faux.Call("c1", "slow", map[string]any{"label": "a"}), faux.Call("c2", "slow", map[string]any{"label": "b"})), nil
			}
			return faux.Reply(faux.Text("noted: " + last.Text())), nil
		default:
			return faux.Reply(faux.Text("done")), nil
		}
	}
	pub, err := bus.Publisher(context.Background(), run, natsbus.PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pub.Close(context.Background()) })
	a, err := agent.New(agent.Options{Config: loop.Config{Provider: p, Model: providers.Model{ID: "faux"}}, Tools: []*tools.Tool{slow}})
	if err != nil {
		t.Fatal(err)
	}
	a.Subscribe(pub.Handle)
	return a, pub
}

// TestWorkerConsumerController: a worker agent, a consumer that rebuilds the
// transcript from the events, and a controller that steers, all through
// NATS only.
func TestWorkerConsumerController(t *testing.T) {
	srv := startServer(t)
	run := "run-1"
	release, started := make(chan struct{}), make(chan struct{})
	bus := srv.connect(t)
	a, pub := worker(t, bus, run, release, started)
	steered := make(chan struct{}, 1)
	target := natsbus.Target{Steering: pushed{a.Steering(), steered}, FollowUps: a.FollowUps(), Abort: a.Abort}
	stop, err := bus.Serve(context.Background(), run, "worker", func(c natsbus.Command) { c.Apply(target) })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	col, sub := subscribeAll(t, srv.connect(t), run)
	done := prompt(a)
	<-started
	if err := srv.connect(t).Send(context.Background(), run, natsbus.Command{Type: natsbus.CommandSteer, Text: "also this"}); err != nil {
		t.Fatal(err)
	}
	<-steered // the steering message is in the agent's queue before the tools finish
	if n := a.Steering().Len(); n != 1 {
		t.Fatalf("the steering queue holds %d messages, want 1", n)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	col.wait(t)
	col.contiguous(t, 1)
	sameTranscript(t, col.msgs, a.State().Messages)
	if got := a.State().Messages[len(a.State().Messages)-1].(providers.AssistantMessage).Text(); got != "noted: also this" {
		t.Fatalf("steering did not reach the worker: %q", got)
	}
	if pub.Failed() != 0 || sub.Last() != pub.Seq() {
		t.Fatalf("published %d (failed %d), delivered %d", pub.Seq(), pub.Failed(), sub.Last())
	}
}

// pushed is a queue that signals each push it forwards to q.
type pushed struct {
	q    natsbus.Queue
	done chan<- struct{}
}

func (p pushed) Push(msgs ...providers.Message) {
	p.q.Push(msgs...)
	select {
	case p.done <- struct{}{}:
	default:
	}
}

func TestAbortOverNATS(t *testing.T) {
	srv := startServer(t)
	run := "run-abort"
	release, started := make(chan struct{}), make(chan struct{})
	defer close(release)
	bus := srv.connect(t)
	a, _ := worker(t, bus, run, release, started)
	target := natsbus.Target{Steering: a.Steering(), FollowUps: a.FollowUps(), Abort: a.Abort}
	stop, err := bus.Serve(context.Background(), run, "worker", func(c natsbus.Command) { c.Apply(target) })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	done := prompt(a)
	<-started
	if err := srv.connect(t).Send(context.Background(), run, natsbus.Command{Type: natsbus.CommandAbort}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("an aborted run returned %v", err)
	}
	if msg := a.State().ErrorMessage; !strings.Contains(msg, "aborted") {
		t.Fatalf("run not aborted: %q", msg)
	}
}

// TestServerRestartMidRun stops the server while the worker's tools run
// and starts it again only once a publish has failed for want of it: the
// publisher retries, the consumer reconnects, and no event is lost or
// repeated.
func TestServerRestartMidRun(t *testing.T) {
	srv := startServer(t)
	run := "run-restart"
	release, started := make(chan struct{}), make(chan struct{})
	js := &failWitness{JetStream: srv.jetstream(t), failed: make(chan struct{})}
	a, pub := worker(t, newBus(t, js, natsbus.Options{}), run, release, started)
	col, _ := subscribeAll(t, srv.connect(t), run)
	done := prompt(a)
	<-started
	srv.stop()
	close(release) // the tool results are published into the outage
	select {
	case <-js.failed:
	case <-time.After(60 * time.Second):
		t.Fatal("no publish was attempted while the server was down")
	}
	srv.start()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	col.wait(t)
	col.contiguous(t, 1)
	sameTranscript(t, col.msgs, a.State().Messages)
	if pub.Failed() != 0 {
		t.Fatalf("%d events lost", pub.Failed())
	}
}

// failWitness is a JetStream client that reports its first failed publish.
type failWitness struct {
	jetstream.JetStream
	once   sync.Once
	failed chan struct{}
}

func (w *failWitness) PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	ack, err := w.JetStream.PublishMsg(ctx, msg, opts...)
	if err != nil {
		w.once.Do(func() { close(w.failed) })
	}
	return ack, err
}

// TestLateConsumer joins after the run ended, from the start and from the
// middle.
func TestLateConsumer(t *testing.T) {
	srv := startServer(t)
	run := "run-late"
	release, started := make(chan struct{}), make(chan struct{})
	close(release)
	a, pub := worker(t, srv.connect(t), run, release, started)
	if err := a.Prompt(context.Background(), providers.NewUserText("go")); err != nil {
		t.Fatal(err)
	}
	bus := srv.connect(t)
	all := newCollector(1)
	sub, err := bus.Subscribe(context.Background(), run, 1, all.handle)
	if err != nil {
		t.Fatal(err)
	}
	all.wait(t)
	sub.Stop()
	all.contiguous(t, 1)
	sameTranscript(t, all.msgs, a.State().Messages)

	from := pub.Seq() - 3
	tail := newCollector(1)
	sub2, err := bus.Subscribe(context.Background(), run, from, tail.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer sub2.Stop()
	tail.wait(t)
	tail.contiguous(t, from)
	if len(tail.seqs) != 4 {
		t.Fatalf("from %d: %d events", from, len(tail.seqs))
	}
	// And it follows live: a second run on the same id.
	if err := a.Prompt(context.Background(), providers.NewUserText("more")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for sub2.Last() < pub.Seq() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if sub2.Last() != pub.Seq() {
		t.Fatalf("live events not delivered: %d of %d", sub2.Last(), pub.Seq())
	}
	tail.contiguous(t, from)
}

func TestValidation(t *testing.T) {
	for _, id := range []string{"", "a.b", "a*", "a>", "a b"} {
		if natsbus.CheckRunID(id) == nil {
			t.Errorf("%q accepted", id)
		}
	}
	srv := startServer(t)
	js := srv.jetstream(t)
	if err := srv.connect(t).Send(context.Background(), "r", natsbus.Command{Type: "explode"}); err == nil {
		t.Error("unknown command accepted")
	}
	if _, err := natsbus.New(nil, natsbus.Options{}); err == nil {
		t.Error("a nil client accepted")
	}
	long := strings.Repeat("a", natsbus.MaxIDLength+1)
	for _, tt := range []struct {
		stream, prefix string
		ok             bool
	}{
		{"", "", true},
		{"MY_RUNS-2", "acme.agents.v2", true},
		{"S", "a", true},
		{"a.b", "", false},
		{"a b", "", false},
		{"A*", "", false},
		{long, "", false},
		{"", "a..b", false},
		{"", ".a", false},
		{"", "a.", false},
		{"", "a.*", false},
		{"", "a.>", false},
		{"", "a b", false},
		{"", "a\x00b", false},
		{"", long, false},
	} {
		_, err := natsbus.New(js, natsbus.Options{Stream: tt.stream, Prefix: tt.prefix})
		if (err == nil) != tt.ok {
			t.Errorf("stream %.20q, prefix %.20q: %v", tt.stream, tt.prefix, err)
		}
	}
}

// TestBusesApart: two buses with their own stream and prefix on one
// server carry runs of the same id without seeing each other's events or
// commands, and their subjects are the ones documented.
func TestBusesApart(t *testing.T) {
	srv := startServer(t)
	js := srv.jetstream(t)
	def := newBus(t, js, natsbus.Options{})
	own := newBus(t, js, natsbus.Options{Stream: "TEAM_B", Prefix: "team-b.runs"})
	if got := def.EventsSubject("r") + " " + def.ControlSubject("r"); got != "agentloop.runs.r.events agentloop.runs.r.control" {
		t.Fatalf("default subjects: %s", got)
	}
	if got := own.EventsSubject("r") + " " + own.ControlSubject("r"); got != "team-b.runs.r.events team-b.runs.r.control" {
		t.Fatalf("own subjects: %s", got)
	}
	if _, err := js.Stream(context.Background(), "TEAM_B"); err != nil {
		t.Fatalf("the own stream: %v", err)
	}
	run := "same-id"
	got := map[*natsbus.Bus]*collector{}
	commands := map[*natsbus.Bus]chan natsbus.Command{}
	for _, bus := range []*natsbus.Bus{def, own} {
		pub, err := bus.Publisher(context.Background(), run, natsbus.PublisherOptions{})
		if err != nil {
			t.Fatal(err)
		}
		col, _ := subscribeAll(t, bus, run)
		got[bus] = col
		cmds := make(chan natsbus.Command, 4)
		commands[bus] = cmds
		stop, err := bus.Serve(context.Background(), run, "worker", func(c natsbus.Command) { cmds <- c })
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		n := 2
		if bus == own {
			n = 3
		}
		pub.Handle(context.Background(), events.AgentStart{})
		for range n - 2 {
			pub.Handle(context.Background(), events.TurnStart{})
		}
		pub.Handle(context.Background(), events.AgentEnd{})
		if err := pub.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := bus.Send(context.Background(), run, natsbus.Command{Type: natsbus.CommandSteer, Text: bus.ControlSubject(run)}); err != nil {
			t.Fatal(err)
		}
	}
	for bus, want := range map[*natsbus.Bus]string{def: "agent_start agent_end", own: "agent_start turn_start agent_end"} {
		got[bus].wait(t)
		got[bus].contiguous(t, 1)
		got[bus].mu.Lock()
		types := strings.Join(got[bus].types, " ")
		got[bus].mu.Unlock()
		if types != want {
			t.Errorf("%s: delivered %s, want %s", bus.EventsSubject(run), types, want)
		}
		select {
		case c := <-commands[bus]:
			if c.Text != bus.ControlSubject(run) {
				t.Errorf("%s: served %q", bus.ControlSubject(run), c.Text)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no command", bus.ControlSubject(run))
		}
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
