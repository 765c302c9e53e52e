// Command extract asks an agent for a typed answer: the fields of an
// invoice, as a Go struct. The schema comes from the struct; an answer
// that does not fit is sent back with the list of what is wrong, and the
// model corrects it.
//
//	go run ./examples/extract [-provider openai]
//
// Without an API key (see providers/auto) a scripted model first answers
// with a wrong type and a missing field, then corrects itself.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events/term"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/auto"
	"github.com/agentloop/agentloop/providers/faux"
)

// Invoice is the answer wanted.
type Invoice struct {
	Vendor string  `json:"vendor" jsonschema:"description=Who issued the invoice"`
	Date   string  `json:"date" jsonschema:"description=Issue date, YYYY-MM-DD,pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
	Total  float64 `json:"total" jsonschema:"description=Amount due, in the invoice's currency"`
	Paid   bool    `json:"paid"`
}

const document = `ACME Tools Ltd — Invoice 2291
Issued 2026-11-02. Due on receipt.
3 x torque wrench ........ 40.00
Total due: 120.00 EUR. Status: PAID (card, 2026-11-03).`

func main() {
	name := flag.String("provider", "", "the provider: "+strings.Join(auto.Names, ", ")+" (default: the first whose key is set)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inv, err := run(ctx, os.Stdout, *name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(1)
	}
	fmt.Printf("%+v\n", inv)
}

// run asks for the invoice's fields, printing the conversation to out.
func run(ctx context.Context, out io.Writer, name string) (Invoice, error) {
	script := faux.New(
		faux.Reply(faux.Call("call_1", "final_answer", map[string]any{"vendor": "ACME Tools Ltd", "total": "one hundred twenty", "paid": true})),
		faux.Reply(faux.Text("I will fix the total and add the date."),
			faux.Call("call_2", "final_answer", map[string]any{"vendor": "ACME Tools Ltd", "date": "2026-11-02", "total": 120, "paid": true})))
	var provider providers.Provider = script
	model := script.Model("scripted")
	live, m, ok, err := auto.FromEnv(ctx, name)
	switch {
	case err != nil:
		return Invoice{}, err
	case ok:
		provider, model = live, m
		fmt.Fprintln(out, "extract: using", auto.Describe(model))
	default:
		fmt.Fprintln(out, "extract: no API key is set, so a scripted model answers.")
	}
	a, err := agent.New(agent.Options{Config: loop.Config{Provider: provider, Model: model},
		SystemPrompt: "You extract data from documents."})
	if err != nil {
		return Invoice{}, err
	}
	a.Subscribe(term.New(out).Handle)
	return agent.Ask[Invoice](ctx, a, "Extract the invoice's fields:\n\n"+document)
}
