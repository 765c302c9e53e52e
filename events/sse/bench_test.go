package sse

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// discard is a connection that takes everything at once.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Flush()                      {}

// BenchmarkPublishWhileClientsArrive: Publish's latency, and the slowest
// Publish seen, on a Broker holding a 1 MB conversation and streaming an
// answer while clients arrive all at once (each admitted one encodes a
// snapshot and then follows; past MaxClients, 503).
//
//	go test -run XXX -bench PublishWhileClientsArrive ./events/sse
func BenchmarkPublishWhileClientsArrive(b *testing.B) {
	for _, arriving := range []int{0, 256, 10000} {
		b.Run(fmt.Sprintf("arriving=%d", arriving), func(b *testing.B) {
			br := New(0)
			ctx, cancel := context.WithCancel(context.Background())
			for i := range 1000 {
				br.Handle(ctx, events.MessageEnd{Message: providers.NewUserText(fmt.Sprintf("%d %s", i, strings.Repeat("x", 1000)))})
			}
			bl := kit.NewBuilder(providers.Model{ID: "m"})
			br.Handle(ctx, events.MessageStart{Message: *bl.Start().Message})
			br.Handle(ctx, events.MessageUpdate{Stream: bl.TextStart()})
			req := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
			var wg sync.WaitGroup
			b.ResetTimer()
			for range arriving {
				wg.Go(func() { br.ServeHTTP(&discard{h: http.Header{}}, req) })
			}
			var slowest time.Duration
			for range b.N {
				t0 := time.Now()
				br.Handle(ctx, events.MessageUpdate{Stream: bl.TextDelta("abcd")})
				slowest = max(slowest, time.Since(t0))
			}
			b.StopTimer()
			cancel()
			wg.Wait()
			b.ReportMetric(float64(slowest.Microseconds()), "max-µs")
		})
	}
}
