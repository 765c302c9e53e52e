package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentloop/agentloop/internal/httpx"
	"github.com/agentloop/agentloop/tools"
)

// server is one attached server: its connection (made again after it
// drops) and its listed tools.
type server struct {
	ts     *Toolset
	spec   Server
	stderr *tail

	dialing sync.Mutex // one connection attempt at a time
	mu      sync.Mutex
	session *sdk.ClientSession // nil while disconnected
	lost    chan struct{}      // closed when session ends
	tools   []listedTool       // the latest listing, in the server's order
	cut     error              // what a bound left out of it, if anything
	cmd     *exec.Cmd          // the stdio server's latest process
	proc    *stdio             // and its transport
	// connected reports a first connection was made (guarded by dialing).
	connected bool

	// relisting is set while a relist runs; again asks it to list once
	// more when it is done (guarded by mu).
	relisting, again bool

	progress sync.Map // progress token → func(tools.Result)
	tokens   atomic.Uint64
}

// connect makes a connection and watches it end.
func (s *server) connect(ctx context.Context) error {
	t, err := s.transport(ctx)
	if err != nil {
		return fmt.Errorf("mcp: server %q: %w", s.spec.Name, err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "agentloop", Version: "1"}, &sdk.ClientOptions{
		Capabilities:                &sdk.ClientCapabilities{},
		ToolListChangedHandler:      func(context.Context, *sdk.ToolListChangedRequest) { s.relist() },
		ProgressNotificationHandler: s.onProgress,
	})
	session, err := client.Connect(ctx, t, nil)
	if err != nil {
		note := ""
		if p, ok := t.(*stdio); ok { // what the process said as it died
			p.stop()
			note = p.ended(stderrAfter)
		}
		return fmt.Errorf("mcp: server %q: connecting: %w%s", s.spec.Name, err, note)
	}
	lost := make(chan struct{})
	s.mu.Lock()
	s.session, s.lost = session, lost
	s.mu.Unlock()
	s.ts.relists.Add(1)
	go func() {
		defer s.ts.relists.Done()
		_ = session.Wait()
		_ = session.Close() // the process too, if it still runs
		s.mu.Lock()
		if s.session == session {
			s.session = nil
		}
		s.mu.Unlock()
		close(lost)
	}()
	return nil
}

func (s *server) transport(ctx context.Context) (sdk.Transport, error) {
	switch {
	case s.spec.Dial != nil:
		return s.spec.Dial(ctx)
	case s.spec.Command != "":
		return s.commandTransport(), nil
	}
	client := s.spec.HTTPClient
	if client == nil {
		client = &http.Client{Transport: s.ts.http}
	}
	c := *client
	c.Transport = roundTripper{s: s, next: transportOf(client)}
	lim := s.ts.opts.Limits.MaxMessageBytes
	return &sdk.StreamableClientTransport{Endpoint: s.spec.URL, HTTPClient: &c, MaxEventSize: 2*lim + 64<<10}, nil
}

// current returns the live session, connecting (again, if it dropped).
// Connections are made one at a time: a notification that arrives while
// the first is being made waits for it instead of making another.
func (s *server) current(ctx context.Context) (*sdk.ClientSession, <-chan struct{}, error) {
	s.dialing.Lock()
	defer s.dialing.Unlock()
	s.mu.Lock()
	session, lost := s.session, s.lost
	s.mu.Unlock()
	if session != nil {
		return session, lost, nil
	}
	if err := s.ts.ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("mcp: the toolset is closed")
	}
	first := !s.connected
	if err := s.connect(ctx); err != nil {
		return nil, nil, err
	}
	s.connected = true
	if !first {
		s.relist() // the server may have changed while away
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == nil {
		return nil, nil, fmt.Errorf("mcp: server %q: the connection dropped at once", s.spec.Name)
	}
	return s.session, s.lost, nil
}

// call runs one tool call. A call whose connection drops while it runs is
// not sent again: the model reads that it may or may not have run.
func (s *server) call(ctx context.Context, name string, args map[string]any) (tools.Result, error) {
	session, _, err := s.current(ctx)
	if err != nil {
		return tools.Result{}, err
	}
	token := s.spec.Name + "-" + strconv.FormatUint(s.tokens.Add(1), 10)
	s.progress.Store(token, func(r tools.Result) { tools.ReportProgress(ctx, r) })
	defer s.progress.Delete(token)
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken(token)
	res, err := session.CallTool(ctx, params)
	if err != nil {
		var refusal *jsonrpc.Error
		if size, ok := tooLarge(err); ok {
			return tools.Result{}, errors.New(TooLargeText(s.spec.Name, size, int64(s.ts.opts.Limits.MaxMessageBytes)))
		}
		if tooDeep(err) {
			return tools.Result{}, errors.New(TooDeepText(s.spec.Name, maxMessageDepth))
		}
		switch {
		case ctx.Err() != nil:
			return tools.Result{}, ctx.Err()
		case errors.As(err, &refusal):
			return tools.Result{}, errors.New(s.redact(RefusedText(s.spec.Name, refusal.Message)))
		}
		// No answer: whether the call ran is unknown, so it is not sent
		// again, and the next call connects anew.
		s.ts.opts.Logger.Warn("mcp: connection lost during a call", "server", s.spec.Name, "err", err)
		s.forget(session)
		return tools.Result{}, errors.New(LostText(s.spec.Name))
	}
	out := result(res)
	if res.IsError {
		return tools.Result{}, tools.ErrorResult(out)
	}
	return out, nil
}

// redact removes from a text quoting the server every value of the
// headers sent to it (a token it echoes back, say), in any form
// httpx.Redact reads.
func (s *server) redact(text string) string {
	for _, vs := range s.spec.Header {
		for _, v := range vs {
			text = httpx.Redact(text, v)
		}
	}
	return text
}

func (s *server) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	p := req.Params
	report, ok := s.progress.Load(fmt.Sprint(p.ProgressToken))
	if !ok {
		return
	}
	text := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		text += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if p.Message != "" {
		text += ": " + p.Message
	}
	report.(func(tools.Result))(tools.TextResult(text))
}

// forget drops a session that stopped answering, so the next call
// connects again.
func (s *server) forget(session *sdk.ClientSession) {
	s.mu.Lock()
	if s.session == session {
		s.session = nil
	}
	s.mu.Unlock()
	_ = session.Close()
}

func (s *server) close() error {
	s.dialing.Lock() // no connection is being made
	defer s.dialing.Unlock()
	s.mu.Lock()
	session := s.session
	s.session = nil
	s.mu.Unlock()
	if session == nil {
		return nil
	}
	return session.Close()
}

// roundTripper adds the server's headers to every request, and bounds
// the messages of every response (see boundedReader).
type roundTripper struct {
	s    *server
	next http.RoundTripper
}

func (t roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.s.spec.Header) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.s.spec.Header {
			r.Header[k] = v
		}
	}
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = t.s.boundedBodyOf(resp.Body, resp.Header.Get("Content-Type"))
	resp.ContentLength = -1
	return resp, nil
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}
