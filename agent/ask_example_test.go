package agent_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
)

// invoice is the typed answer: its schema comes from the struct, as a
// tool's parameters do.
type invoice struct {
	Number string  `json:"number" jsonschema:"the invoice number, as printed"`
	Total  float64 `json:"total"`
	Paid   bool    `json:"paid"`
}

// Ask returns the model's answer as a Go value. The scripted model (faux)
// does not offer structured output, so Ask offers a tool named
// "final_answer" whose arguments are the answer: to script an answer, reply
// with a call to that tool. The first answer here lacks a field; Ask sends
// it back with what is wrong and the model answers again.
func ExampleAsk() {
	model := faux.New(
		faux.Reply(faux.Call("a1", "final_answer", map[string]any{"number": "INV-7", "total": "120.50"})),
		faux.Reply(faux.Call("a2", "final_answer", map[string]any{"number": "INV-7", "total": 120.5, "paid": true})),
	)
	a, err := agent.New(agent.Options{Config: loop.Config{Provider: model, Model: providers.Model{ID: "scripted", Provider: "faux"}}})
	if err != nil {
		panic(err)
	}
	inv, err := agent.Ask[invoice](context.Background(), a, "Which invoice is this? INV-7, 120.50 EUR, paid.")
	if err != nil {
		fmt.Println("no answer:", err)
		return
	}
	fmt.Printf("%+v\n", inv)
	fmt.Println(len(model.Requests()), "requests")
	// Output:
	// {Number:INV-7 Total:120.5 Paid:true}
	// 2 requests
}

// When no answer fits within AskOptions.MaxAttempts, Ask returns an
// *agent.AnswerError holding the last answer and what was wrong with it.
func ExampleAskWith_answerError() {
	model := faux.New(faux.Reply(faux.Text("It is INV-7.")))
	a, _ := agent.New(agent.Options{Config: loop.Config{Provider: model, Model: providers.Model{ID: "scripted"}}})
	_, err := agent.AskWith[invoice](context.Background(), a, "Which invoice?", agent.AskOptions{MaxAttempts: 1})
	if ae, ok := errors.AsType[*agent.AnswerError](err); ok {
		fmt.Printf("%d attempt; answer %q; problem: %s\n", ae.Attempts, ae.Answer, ae.Problem)
	}
	// Output:
	// 1 attempt; answer "It is INV-7."; problem: the answer came as prose, not through the final_answer tool
}

// A run stopped from outside returns a *loop.RunError whose cause is the
// context's error: context.Canceled for Abort or a cancel func,
// context.DeadlineExceeded for a context that timed out. Test for both.
func ExampleAgent_Prompt_timeout() {
	slow := faux.New(faux.Reply(faux.Text("This answer streams far too slowly.")))
	slow.Delay = time.Hour // each chunk waits; the pause ends with the context
	a, _ := agent.New(agent.Options{Config: loop.Config{Provider: slow, Model: providers.Model{ID: "scripted"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := a.Prompt(ctx, providers.NewUserText("hello?"))
	fmt.Println(errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled))
	fmt.Println(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled))
	// Output:
	// true false
	// true
}
