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

func Example() {
	weather := tools.Must(tools.New("weather", "Get the forecast for a city",
		func(ctx context.Context, id string, in weatherArgs, update tools.UpdateFunc) (tools.Result, error) {
			return tools.TextResult(fmt.Sprintf("%s: sunny for %d days", in.City, in.Days)), nil
		}))

	// The model sent days as a string; it is coerced to the schema's integer.
	args, err := weather.ValidateArguments(map[string]any{"city": "Oslo", "days": "3"})
	if err != nil {
		panic(err)
	}
	res, _ := weather.Execute(context.Background(), "call_1", args, nil)
	fmt.Println(res.Content[0])

	// Bad arguments produce the error text the model will read.
	_, err = weather.ValidateArguments(map[string]any{"days": 9})
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
