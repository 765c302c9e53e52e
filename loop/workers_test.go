package loop

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// goroutineID is the number runtime.Stack gives the calling goroutine.
func goroutineID(t *testing.T) int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	if len(f) < 2 {
		t.Errorf("stack %q", buf)
		return -1
	}
	id, err := strconv.Atoi(string(f[1]))
	if err != nil {
		t.Errorf("stack %q: %v", buf, err)
	}
	return id
}

// TestWorkersLastTheRun: the batches of one run share its workers. Each
// body waits until every body of its batch has started (so they truly run
// together); over batches of 4, 2, 4 and 3 calls (and a limit of 3 in a
// second case), the bodies ran on exactly as many goroutines as the
// largest batch needed, and none of them outlives the run.
func TestWorkersLastTheRun(t *testing.T) {
	sizes := []int{4, 2, 4, 3}
	for _, tc := range []struct {
		limit, want int
	}{{0, 4}, {3, 3}} {
		t.Run(fmt.Sprint("limit=", tc.limit), func(t *testing.T) {
			others := goleak.IgnoreCurrent()
			var mu sync.Mutex
			ran := map[int]bool{}
			arrived := make([]*barrier, len(sizes))
			var replies []providers.AssistantMessage
			for b, n := range sizes {
				if tc.limit > 0 {
					n = min(n, tc.limit) // the bodies that run together
				}
				arrived[b] = &barrier{need: n, all: make(chan struct{})}
				n = sizes[b]
				var calls []providers.Content
				for i := range n {
					calls = append(calls, faux.Call(fmt.Sprintf("b%dc%d", b, i), "w", map[string]any{"label": fmt.Sprint(b)}))
				}
				replies = append(replies, faux.Reply(calls...))
			}
			replies = append(replies, faux.Reply())
			body := func(ctx context.Context, a labelArgs) (tools.Result, error) {
				id := goroutineID(t)
				mu.Lock()
				ran[id] = true
				mu.Unlock()
				b, _ := strconv.Atoi(a.Label)
				select {
				case <-arrived[b].arrive():
				case <-ctx.Done():
					return tools.Result{}, ctx.Err()
				case <-time.After(patience):
					t.Errorf("batch %d: not every body started before the others returned", b)
				}
				return tools.TextResult("ok"), nil
			}
			runLoop(t, context.Background(), faux.New(replies...), []*tools.Tool{echoTool(t, "w", body)}, Config{Limits: Limits{MaxParallelTools: tc.limit}})
			if len(ran) != tc.want {
				t.Errorf("the bodies ran on %d goroutines, want %d (the largest batch's)", len(ran), tc.want)
			}
			goleak.VerifyNone(t, others)
		})
	}
}

// barrier lets its bodies through once need of them have arrived.
type barrier struct {
	mu      sync.Mutex
	n, need int
	all     chan struct{}
}

func (b *barrier) arrive() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n++; b.n == b.need {
		close(b.all)
	}
	return b.all
}
