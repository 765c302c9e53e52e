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

type recorder struct{ got []string }

func (r *recorder) Report(p progress) { r.got = append(r.got, p.text) }

// TestCallInit: a Call held in memory of the caller's carries its id and
// Reporter as With's context does, and Init makes it anew.
func TestCallInit(t *testing.T) {
	var c Call[progress]
	rec := &recorder{}
	ctx := c.Init(context.Background(), "c1", rec)
	Report(ctx, progress{"one"})
	if ID[progress](ctx) != "c1" || len(rec.got) != 1 || rec.got[0] != "one" {
		t.Fatalf("id %q, reports %v", ID[progress](ctx), rec.got)
	}
	ctx = c.Init(context.Background(), "c2", nil)
	Report(ctx, progress{"two"})
	if ID[progress](ctx) != "c2" || len(rec.got) != 1 {
		t.Fatalf("after Init again: id %q, reports %v", ID[progress](ctx), rec.got)
	}
}
