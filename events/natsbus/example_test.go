package natsbus_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/events/natsbus"
)

// A worker publishes a run's events; a subscriber elsewhere follows them,
// in order, from the first.
func Example() {
	js, stopServer := exampleServer()
	defer stopServer()
	ctx := context.Background()

	bus, err := natsbus.New(js, natsbus.Options{})
	if err != nil {
		panic(err)
	}
	if _, err := bus.EnsureStream(ctx); err != nil {
		panic(err)
	}

	pub, err := bus.Publisher(ctx, "run-1", natsbus.PublisherOptions{})
	if err != nil {
		panic(err)
	}
	for _, e := range []events.Event{events.AgentStart{}, events.TurnStart{}, events.AgentEnd{}} {
		pub.Handle(ctx, e) // what a.Subscribe(pub.Handle) does for a run
	}
	_ = pub.Close(ctx)

	ended := make(chan struct{})
	sub, err := bus.Subscribe(ctx, "run-1", 1, func(seq uint64, e events.Event) {
		fmt.Println(seq, e.Type())
		if e.Type() == events.TypeAgentEnd {
			close(ended)
		}
	})
	if err != nil {
		panic(err)
	}
	defer sub.Stop()
	<-ended
	// Output:
	// 1 agent_start
	// 2 turn_start
	// 3 agent_end
}

// exampleServer starts an embedded nats-server with JetStream and returns
// a client of it.
func exampleServer() (jetstream.JetStream, func()) {
	dir, err := os.MkdirTemp("", "natsbus-example")
	if err != nil {
		panic(err)
	}
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoSigs: true})
	if err != nil {
		panic(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		panic("nats-server did not start")
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		panic(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		panic(err)
	}
	return js, func() {
		nc.Close()
		srv.Shutdown()
		srv.WaitForShutdown()
		os.RemoveAll(dir)
	}
}
