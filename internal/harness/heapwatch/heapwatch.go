// Package heapwatch measures the peak heap of a piece of work, for tests
// and benchmarks that report or bound memory.
package heapwatch

import (
	"runtime"
	"time"
)

// Peak runs f and returns the largest heap in use (runtime.MemStats
// HeapAlloc) seen while it ran, sampled every interval, and the heap in
// use just before it started, after a collection.
func Peak(interval time.Duration, f func()) (peak, base uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base = ms.HeapAlloc
	stop := make(chan struct{})
	done := make(chan uint64)
	go func() {
		var ms runtime.MemStats
		var peak uint64
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-stop:
				done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(stop)
	return <-done, base
}
