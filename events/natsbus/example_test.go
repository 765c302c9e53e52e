package natsbus_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/events/natsbus"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
)

// A worker publishes its agent's events to NATS JetStream; a consumer
// elsewhere reads them, in order and each once, from any sequence. Here
// both run in one process against an embedded nats-server; in production
// the worker and the consumer connect to the same server
// (nats.Connect(url)) from different machines.
func Example() {
	dir, err := os.MkdirTemp("", "natsbus-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: dir, NoSigs: true})
	if err != nil {
		panic(err)
	}
	srv.Start()
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	if !srv.ReadyForConnections(10 * time.Second) {
		panic("nats-server did not start")
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		panic(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if _, err := natsbus.EnsureStream(ctx, js); err != nil {
		panic(err)
	}

	// The worker: an agent whose events go to the run's subject.
	pub, err := natsbus.NewPublisher(ctx, js, "run-1", natsbus.PublisherOptions{})
	if err != nil {
		panic(err)
	}
	model := faux.New(faux.Reply(faux.Text("Hello from the worker.")))
	model.ChunkSize = 64 // the text in one delta, between its start and end
	a, _ := agent.New(agent.Options{Config: loop.Config{Provider: model, Model: providers.Model{ID: "scripted"}}})
	a.Subscribe(pub.Publish)
	if err := a.Prompt(ctx, "Hi"); err != nil {
		panic(err)
	}
	if err := pub.Close(ctx); err != nil { // waits until every event is stored
		panic(err)
	}

	// The consumer: every event of the run from the first.
	got := make(chan string, 64)
	sub, err := natsbus.Subscribe(ctx, js, "run-1", 1, func(seq uint64, e events.Event) {
		line := fmt.Sprint(seq, " ", e.Type())
		if end, ok := e.(events.MessageEnd); ok {
			if m, ok := end.Message.(providers.AssistantMessage); ok {
				line += ": " + m.Text()
			}
		}
		got <- line
		if e.Type() == events.TypeAgentEnd {
			close(got)
		}
	})
	if err != nil {
		panic(err)
	}
	defer sub.Stop()
	for line := range got {
		fmt.Println(line)
	}
	// Output:
	// 1 agent_start
	// 2 turn_start
	// 3 message_start
	// 4 message_end
	// 5 message_start
	// 6 message_update
	// 7 message_update
	// 8 message_update
	// 9 message_end: Hello from the worker.
	// 10 turn_end
	// 11 agent_end
}
