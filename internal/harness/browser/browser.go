// Package browser starts headless Chromium for a test (Debian's chromium;
// without it the test is skipped, or fails under CI, through package
// needs).
//
//	ctx := browser.New(t)
//	err := chromedp.Run(ctx, chromedp.Navigate(url), ...)
package browser

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentloop/agentloop/internal/harness/needs"
)

// New starts headless Chromium for one test, with any extra options, and
// returns a chromedp context bounded to 90 s. Everything Chromium writes
// (its profile and its own temporary folders) goes where the test removes
// it, so a test run leaves nothing in TMPDIR.
func New(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	exe := needs.Chromium(t)
	// The folder's name is short: Chromium puts a socket in it, and a
	// socket's path may not pass 107 bytes (t.TempDir's carries the test's
	// name).
	tmp, err := os.MkdirTemp("", "cr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) }) // runs after the browser is gone (cleanups run last first)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1100, 800), chromedp.Env("TMPDIR="+tmp))
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}
