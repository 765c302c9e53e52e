package toolctx

import (
	"context"
	"testing"
)

type progress struct{ text string }

// TestCall: a context made by With carries its id and progress function,
// through derived contexts; another report type or no call reads nothing.
func TestCall(t *testing.T) {
	var got []string
	ctx := With(context.Background(), "c1", func(p progress) { got = append(got, p.text) })
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if id := ID[progress](ctx); id != "c1" {
		t.Fatalf("ID = %q", id)
	}
	Report(ctx, progress{"half"})
	if len(got) != 1 || got[0] != "half" {
		t.Fatalf("progress %v", got)
	}
	if id := ID[string](ctx); id != "" {
		t.Fatalf("ID for another report type = %q", id)
	}
	Report(ctx, "other type") // ignored
	Report(context.Background(), progress{"nowhere"})
	Report(With[progress](context.Background(), "c2", nil), progress{"no function"})
	if len(got) != 1 || ID[progress](context.Background()) != "" {
		t.Fatalf("reports reached %v", got)
	}
}
