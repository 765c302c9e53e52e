package compact_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/loop/compact"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
)

// conversation is n exchanges of about 100 tokens each way.
func conversation(n int) []providers.Message {
	var msgs []providers.Message
	for i := 1; i <= n; i++ {
		msgs = append(msgs,
			providers.NewUserText(fmt.Sprintf("Question %d: %s", i, strings.Repeat("tell me more ", 30))),
			faux.Reply(faux.Text(fmt.Sprintf("Answer %d: %s", i, strings.Repeat("here is more ", 30)))))
	}
	return msgs
}

// A Compactor goes in loop.Config (or agent.Options' Config) and decides,
// before every request, what the request carries. Here Trim is called
// directly on a conversation of twelve exchanges that does not fit a
// window of 1,000 tokens: the oldest turns are left out of the request,
// the transcript keeps them.
func ExampleTrim() {
	transcript := conversation(12)
	out, err := compact.Trim{Window: 1000}.Compact(context.Background(), loop.CompactInput{Transcript: transcript})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d of %d messages sent, ~%d → ~%d tokens\n",
		out.Event.Strategy, len(out.Send), len(transcript), out.Event.Before, out.Event.After)
	fmt.Println(providers.TextOf(out.Send[0].(providers.UserMessage).Content))
	// Output:
	// trim: 10 of 24 messages sent, ~1976 → ~936 tokens
	// [Earlier messages of this conversation were left out to fit the context window.]
}

// Summarize asks the model (here a scripted one) for a summary of the
// older part, sends it in that part's place and stores it in the
// transcript (Store), so that later requests start from it.
func ExampleSummarize() {
	model := faux.New(faux.Reply(faux.Text("The user asked many questions; each was answered at length.")))
	in := loop.CompactInput{Transcript: conversation(12), Provider: model, Model: providers.Model{ID: "scripted"}}
	cfg := compact.Summarize{Window: 2000}
	out, err := cfg.Compact(context.Background(), in)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %s\n", out.Event.Strategy, out.Event.Note)
	fmt.Println(out.Store.(providers.SummaryMessage).Summary)
	fmt.Println(len(out.Send), "messages sent")
	// Output:
	// summarize: 15 messages summarised in 59 characters
	// The user asked many questions; each was answered at length.
	// 10 messages sent
}

// The strategies combine; this is the usual setup for a long-running
// agent: summaries of the older part, and tool results older than four
// turns cut to their head and tail. Zero fields take the model's context
// window (Model.ContextWindow) and documented defaults.
func ExampleChain() {
	cfg := loop.Config{
		Provider:  faux.New(),
		Model:     providers.Model{ID: "scripted", ContextWindow: 128000},
		Compactor: compact.Chain(compact.Summarize{}, compact.ShortenResults{OlderThan: 4}),
	}
	_ = cfg // loop.Run(ctx, msgs, conversation, cfg, emit), or agent.Options{Config: cfg}
}
