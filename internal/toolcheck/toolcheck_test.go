package toolcheck

import (
	"context"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/tools"
)

func TestCheck(t *testing.T) {
	mk := func(name string) *tools.Tool {
		tl, err := tools.New(tools.Config{Name: name, Description: "d"}, func(context.Context, struct{}) (tools.Result, error) {
			return tools.Result{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	a, b := mk("a"), mk("b")
	cases := []struct {
		name string
		ts   []*tools.Tool
		want string // "" for no error
	}{
		{"none", nil, ""},
		{"distinct", []*tools.Tool{a, b}, ""},
		{"nil", []*tools.Tool{a, nil}, "tool 1: "},
		{"zero", []*tools.Tool{{}}, "tool 0: "},
		{"twice", []*tools.Tool{a, b, a}, `two tools are named "a"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.ts)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Check: %v", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Fatalf("Check = %v, want an error starting %q", err, c.want)
			}
		})
	}
}
