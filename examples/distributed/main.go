// Command distributed runs an agent in a worker and serves its chat page
// from a gateway; the two talk only through NATS JetStream (package
// events/natsbus): the worker publishes the run's events and takes prompt,
// steer and abort commands; the gateway turns the events into SSE for the
// browser and the page's messages into commands.
//
//	go run ./examples/distributed                 # both roles, embedded NATS server
//	NATS_URL=nats://host:4222 go run ./examples/distributed -role worker
//	NATS_URL=nats://host:4222 go run ./examples/distributed -role gateway -addr :8080
//
// Without NATS_URL an embedded nats-server with JetStream is started (in a
// temporary folder). With OPENAI_API_KEY set the worker talks to that
// endpoint; otherwise a scripted model answers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/events/natsbus"
	"github.com/agentloop/agentloop/events/sse"
	"github.com/agentloop/agentloop/events/sse/webchat"
	"github.com/agentloop/agentloop/providers"
)

func main() {
	role := flag.String("role", "all", "worker, gateway or all")
	addr := flag.String("addr", "127.0.0.1:8080", "the gateway's listen address")
	run := flag.String("run", "demo", "the run id both sides use")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := start(ctx, *role, *addr, *run); err != nil {
		log.Fatal(err)
	}
}

func start(ctx context.Context, role, addr, run string) error {
	url := os.Getenv("NATS_URL")
	if url == "" {
		srv, stopServer, err := embeddedServer()
		if err != nil {
			return err
		}
		defer stopServer()
		url = srv.ClientURL()
		fmt.Println("distributed: NATS_URL is not set; started an embedded nats-server at", url)
	}
	bus, closeConn, err := connect(url)
	if err != nil {
		return err
	}
	defer closeConn()
	if role == "worker" || role == "all" {
		w, err := newWorker(ctx, bus, run)
		if err != nil {
			return err
		}
		defer w.close()
		fmt.Println("distributed: worker serving run", run)
	}
	if role == "gateway" || role == "all" {
		g, err := newGateway(ctx, bus, run)
		if err != nil {
			return err
		}
		defer g.close()
		srv := webchat.NewServer(addr, g.handler())
		go func() {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
		fmt.Printf("distributed: gateway at %s\n", g.guard.URL("http://"+addr+"/"))
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
	<-ctx.Done()
	return nil
}

// embeddedServer starts a nats-server with JetStream storing in a
// temporary folder. stop shuts it down and removes the folder, so a run
// leaves nothing behind.
func embeddedServer() (srv *server.Server, stop func(), err error) {
	dir, err := os.MkdirTemp("", "agentloop-nats-")
	if err != nil {
		return nil, nil, err
	}
	stop = func() {
		if srv != nil {
			srv.Shutdown()
			srv.WaitForShutdown()
		}
		_ = os.RemoveAll(dir)
	}
	srv, err = server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoSigs: true})
	if err != nil {
		stop()
		return nil, nil, err
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		stop()
		return nil, nil, errors.New("distributed: the embedded nats-server did not start")
	}
	return srv, stop, nil
}

// connect returns the bus of agent runs on the server at url, its stream
// created if need be.
func connect(url string) (*natsbus.Bus, func(), error) {
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))
	if err != nil {
		return nil, nil, err
	}
	var bus *natsbus.Bus
	js, err := jetstream.New(nc)
	if err == nil {
		bus, err = natsbus.New(js, natsbus.Options{})
	}
	if err == nil {
		_, err = bus.EnsureStream(context.Background())
	}
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return bus, nc.Close, nil
}

// worker runs the agent: events out, commands in.
type worker struct {
	agent   *agent.Agent
	pub     *natsbus.Publisher
	stop    func()
	mu      sync.Mutex
	running bool
	runs    sync.WaitGroup
}

func newWorker(ctx context.Context, bus *natsbus.Bus, run string) (*worker, error) {
	a, err := workerAgent()
	if err != nil {
		return nil, err
	}
	w := &worker{agent: a}
	pub, err := bus.Publisher(ctx, run, natsbus.PublisherOptions{})
	if err != nil {
		return nil, err
	}
	w.pub = pub
	w.agent.Subscribe(pub.Handle)
	w.stop, err = bus.Serve(ctx, run, "worker", w.command)
	if err != nil {
		pub.Close(ctx)
		return nil, err
	}
	return w, nil
}

// command starts a run for a prompt that arrives while idle; anything else
// (and a prompt while busy, as steering) goes to the agent.
func (w *worker) command(c natsbus.Command) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c.Type != natsbus.CommandPrompt {
		c.Apply(natsbus.Target{Steering: w.agent.Steering(), FollowUps: w.agent.FollowUps(), Abort: w.agent.Abort})
		return
	}
	if w.running {
		w.agent.Steering().Push(providers.NewUserText(c.Text))
		return
	}
	w.running = true
	w.runs.Add(1)
	go func() {
		defer w.runs.Done()
		_ = w.agent.Prompt(context.Background(), providers.NewUserText(c.Text))
		w.mu.Lock()
		w.running = false
		w.mu.Unlock()
	}()
}

func (w *worker) close() {
	w.stop()
	w.agent.Abort()
	w.runs.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = w.pub.Close(ctx) // flush the run's last events
}

// gateway serves the page; it knows the agent only through NATS.
type gateway struct {
	bus    *natsbus.Bus
	run    string
	broker *sse.Broker
	guard  *webchat.Guard // only the page's owner drives it
	sub    *natsbus.Subscription
}

func newGateway(ctx context.Context, bus *natsbus.Bus, run string) (*gateway, error) {
	g := &gateway{bus: bus, run: run, broker: sse.New(20000), guard: webchat.NewGuard()}
	var err error
	g.sub, err = bus.Subscribe(ctx, run, 1, func(_ uint64, e events.Event) {
		g.broker.Handle(context.Background(), e)
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

func (g *gateway) handler() http.Handler {
	return webchat.Handler(webchat.Backend{
		Guard:  g.guard,
		Events: g.broker,
		Send: func(ctx context.Context, text string) (string, error) {
			return "sent", g.bus.Send(ctx, g.run, natsbus.Command{Type: natsbus.CommandPrompt, Text: text})
		},
		Stop: func(ctx context.Context) error {
			return g.bus.Send(ctx, g.run, natsbus.Command{Type: natsbus.CommandAbort})
		},
	})
}

func (g *gateway) close() {
	g.sub.Stop()
	g.broker.Close()
}
