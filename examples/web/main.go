// Command web serves a single page where you chat with an agent in the
// browser: streaming text, tool cards that appear when a call starts, show
// its progress and settle when it ends, a Stop button, and messages typed
// while the agent works sent as steering. Events reach the page as
// Server-Sent Events (package events/sse); a reload resumes the
// conversation from the replay buffer.
//
//	go run ./examples/web [-addr 127.0.0.1:8080]
//
// With OPENAI_API_KEY set it talks to that endpoint; otherwise a scripted
// model answers every message with three tool calls and a summary.
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
	"time"

	"github.com/agentloop/agentloop/events/sse"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/openai"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	script := scripted()
	var p providers.Provider = script
	m := script.Model("scripted")
	if live, lm, ok := openai.FromEnv(); ok {
		p, m = live, lm
	} else {
		fmt.Println("web: OPENAI_API_KEY is not set; a scripted model answers.")
	}
	a, err := researchAgent(p, m, 1500*time.Millisecond)
	if err != nil {
		log.Fatal(err)
	}
	s := newServer(a)
	srv := sse.NewServer(*addr, s.handler())
	go func() {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, os.Interrupt)
		<-stop
		s.close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	fmt.Printf("web: open %s\n", s.guard.URL("http://"+*addr+"/"))
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
