package tools_test

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop/tools"
)

type weatherArgs struct {
	City  string `json:"city" jsonschema:"description=City name"`
	Units string `json:"units,omitempty" jsonschema:"enum=metric,enum=imperial"`
	Days  int    `json:"days,omitempty" jsonschema:"minimum=1,maximum=7"`
}

// A tool is a Go function over a struct: the schema the model sees comes
// from the struct, and the body gets the model's arguments checked,
// coerced and decoded. The loop does the checking; Check and Run let a
// test do it too.
func Example() {
	weather := tools.Must(tools.New(tools.Config{Name: "weather", Description: "Get the forecast for a city"},
		func(ctx context.Context, in weatherArgs) (string, error) {
			return fmt.Sprintf("%s: sunny for %d days", in.City, in.Days), nil
		}))

	// The model sent days as a string; it is coerced to the schema's integer.
	call, err := weather.Check(map[string]any{"city": "Oslo", "days": "3"})
	if err != nil {
		panic(err)
	}
	res, _ := call.Run(context.Background())
	fmt.Println(res.Content[0])

	// Bad arguments produce the error text the model will read.
	_, err = weather.Check(map[string]any{"days": 9})
	fmt.Println(err)
	// Output:
	// {Oslo: sunny for 3 days }
	// Validation failed for tool "weather":
	//   - city: must have required properties city
	//   - days: must be <= 7
	//
	// Received arguments:
	// {
	//   "days": 9
	// }
}

// A body that returns a struct sends it to the model as JSON; one that
// takes a while reports progress, which subscribers see as
// tool_execution_update events when the loop runs it (outside the loop
// the reports go nowhere).
func ExampleNew_structuredResult() {
	type forecast struct {
		City string  `json:"city"`
		High float64 `json:"high"`
	}
	weather := tools.Must(tools.New(tools.Config{Name: "forecast"},
		func(ctx context.Context, in weatherArgs) (forecast, error) {
			tools.ReportProgress(ctx, tools.TextResult("asking the weather service for "+tools.CallID(ctx)))
			return forecast{City: in.City, High: 4.5}, nil
		}))
	call, _ := weather.Check(map[string]any{"city": "Oslo"})
	res, _ := call.Run(context.Background())
	fmt.Println(res.Text())
	// Output:
	// {"city":"Oslo","high":4.5}
}

// A policy hook reads a struct tool's arguments with Decode.
func ExampleDecode() {
	args := map[string]any{"city": "Bergen", "days": 2.0}
	in, err := tools.Decode[weatherArgs](args)
	fmt.Println(in.City, in.Days, err)
	// Output: Bergen 2 <nil>
}
