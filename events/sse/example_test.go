package sse_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events/sse"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
)

// A Broker subscribed to an agent serves its events to any number of
// browsers (new EventSource("/events")). A client first gets a snapshot
// of the conversation so far, then every event live. In a real server,
// put the Broker behind a Guard (webchat.NewGuard) and serve with
// webchat.NewServer's timeouts.
func ExampleBroker() {
	a, _ := agent.New(agent.Options{Config: loop.Config{
		Provider: faux.New(faux.Reply(faux.Text("Hello!"))), Model: providers.Model{ID: "scripted"}}})
	broker := sse.New(sse.DefaultCapacity)
	broker.CloseOnAgentEnd = true // this example serves a single run
	a.Subscribe(broker.Handle)
	srv := httptest.NewServer(broker)
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		line := lines.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			fmt.Println(name)
		}
		if strings.HasPrefix(line, `data: {"type":"snapshot"`) {
			// The client is connected: start the run.
			if err := a.Prompt(context.Background(), providers.NewUserText("Hi")); err != nil {
				panic(err)
			}
		}
	}
	// Output:
	// snapshot
	// agent_start
	// turn_start
	// message_start
	// message_end
	// message_start
	// message_update
	// message_update
	// message_update
	// message_update
	// message_end
	// turn_end
	// agent_end
}
