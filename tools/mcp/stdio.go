package mcp

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// How long a stdio server has to exit after its standard input closes,
// and again after SIGTERM, before it is killed; and how long the Toolset
// waits for the standard error of a process that has exited.
const (
	terminateAfter = 2 * time.Second
	stderrAfter    = time.Second
)

// stdio is the transport of a server the Toolset starts: the command's
// standard input and output carry the messages (every one through a
// boundedReader), its standard error goes to the server's tail.
type stdio struct {
	s      *server
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process exited and was waited for

	stopOnce sync.Once
	in, out  *os.File // our ends of the pipes
}

// commandTransport makes the transport that starts the server's command.
func (s *server) commandTransport() *stdio {
	cmd := exec.Command(s.spec.Command, s.spec.Args...)
	cmd.Env, cmd.Dir, cmd.Stderr = s.spec.Env, s.spec.Dir, s.stderr
	cmd.WaitDelay = stderrAfter
	t := &stdio{s: s, cmd: cmd, exited: make(chan struct{})}
	s.mu.Lock()
	s.cmd, s.proc = cmd, t
	s.mu.Unlock()
	return t
}

// ended says how the server's latest process ended, when it is a stdio
// server whose process ended (see stdio.ended).
func (s *server) ended() string {
	s.mu.Lock()
	t := s.proc
	s.mu.Unlock()
	if t == nil {
		return ""
	}
	return t.ended(stderrAfter)
}

// Connect starts the process; it implements sdk.Transport.
func (t *stdio) Connect(ctx context.Context) (sdk.Connection, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	t.cmd.Stdin, t.cmd.Stdout = inR, outW
	err = t.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		close(t.exited)
		return nil, err
	}
	t.in, t.out = inW, outR
	ts := t.s.ts
	ts.relists.Add(1)
	go func() {
		defer ts.relists.Done()
		_ = t.cmd.Wait()
		close(t.exited)
	}()
	lim := ts.opts.Limits.MaxMessageBytes
	return (&sdk.IOTransport{
		Reader: io.NopCloser(newBoundedReader(outR, lines, ts.opts.Limits, t.s.spec.Name, ts.opts.Logger.Warn)),
		Writer: stdin{t},
		// Every line is within lim by then; the SDK's own bound (which
		// may count bytes read ahead) only has to stay out of the way.
		MaxLineLength: 2*lim + 64<<10,
	}).Connect(ctx)
}

// stop closes the process's standard input, waits for it to exit
// (SIGTERM, then SIGKILL, if it does not), and closes its output.
func (t *stdio) stop() {
	t.stopOnce.Do(func() {
		if t.in == nil { // never started
			return
		}
		t.in.Close()
		for _, sig := range []os.Signal{syscall.SIGTERM, os.Kill} {
			timer := time.NewTimer(terminateAfter)
			select {
			case <-t.exited:
			case <-timer.C:
				_ = t.cmd.Process.Signal(sig)
			}
			timer.Stop()
		}
		<-t.exited
		t.out.Close()
	})
}

// ended says how the process ended and what its standard error said
// last, to be added to an error; it waits for the process at most wait.
func (t *stdio) ended(wait time.Duration) string {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-t.exited:
	case <-timer.C:
		return ""
	}
	if t.cmd.ProcessState == nil { // it never started
		return ""
	}
	note := "; the process ended (" + t.cmd.ProcessState.String() + ")"
	if tail := lastLines(t.s.stderr.String(), 1024); tail != "" {
		note += "; its standard error ends: " + strconv.Quote(tail)
	}
	return note
}

// lastLines returns the end of s, at most max bytes, from a line's
// start when it can, without surrounding space.
func lastLines(s string, max int) string {
	s = strings.TrimSpace(s)
	if len(s) > max {
		s = s[len(s)-max:]
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	return strings.ToValidUTF8(s, "?")
}

// stdin is the process's standard input; closing it stops the process.
type stdin struct{ t *stdio }

func (w stdin) Write(p []byte) (int, error) { return w.t.in.Write(p) }

func (w stdin) Close() error {
	w.t.stop()
	return nil
}
