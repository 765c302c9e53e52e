package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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
	tools   []*sdk.Tool
	cmd     *exec.Cmd // the stdio server's latest process
	// connected reports a first connection was made (guarded by dialing).
	connected bool

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
		return fmt.Errorf("mcp: server %q: connecting: %w", s.spec.Name, err)
	}
	lost := make(chan struct{})
	s.mu.Lock()
	s.session, s.lost = session, lost
	s.mu.Unlock()
	s.ts.relists.Add(1)
	go func() {
		defer s.ts.relists.Done()
		_ = session.Wait()
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
		client = &http.Client{Transport: &http.Transport{
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
			ResponseHeaderTimeout: 2 * time.Minute,
		}}
	}
	if len(s.spec.Header) > 0 {
		c := *client
		c.Transport = headers{next: transportOf(client), h: s.spec.Header}
		client = &c
	}
	return &sdk.StreamableClientTransport{Endpoint: s.spec.URL, HTTPClient: client}, nil
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

// list lists the server's tools, every page.
func (s *server) list(ctx context.Context) error {
	session, _, err := s.current(ctx)
	if err != nil {
		return err
	}
	var listed []*sdk.Tool
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcp: server %q: listing tools: %w", s.spec.Name, err)
		}
		listed = append(listed, t)
	}
	s.mu.Lock()
	s.tools = listed
	s.mu.Unlock()
	return nil
}

// relist lists the tools again in the background (the server said they
// changed, or the connection was made again) and rebuilds the set.
func (s *server) relist() {
	ts := s.ts
	if ts.ctx.Err() != nil {
		return
	}
	ts.relists.Add(1)
	go func() {
		defer ts.relists.Done()
		ctx, cancel := context.WithTimeout(ts.ctx, time.Minute)
		defer cancel()
		if err := s.list(ctx); err != nil {
			ts.opts.Logger.Warn("mcp: listing tools again failed", "server", s.spec.Name, "err", err)
			return
		}
		ts.rebuild()
	}()
}

func (s *server) listed() []*sdk.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// tool makes a tools.Tool of a listed tool, exposed under name.
func (s *server) tool(t *sdk.Tool, name string) (*tools.Tool, error) {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		schema = []byte(`{"type":"object"}`)
	}
	remote := t.Name
	return tools.NewJSON(tools.Config{Name: name, Description: t.Description, Label: t.Title, Timeout: s.ts.opts.ToolTimeout},
		schema, func(ctx context.Context, args map[string]any) (tools.Result, error) {
			return s.call(ctx, remote, args)
		})
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
		switch {
		case ctx.Err() != nil:
			return tools.Result{}, ctx.Err()
		case errors.As(err, &refusal):
			return tools.Result{}, fmt.Errorf("%s refused the call: %s", s.spec.Name, refusal.Message)
		}
		// No answer: whether the call ran is unknown, so it is not sent
		// again, and the next call connects anew.
		s.forget(session)
		return tools.Result{}, fmt.Errorf("the connection to %s was lost while the call was running; it may or may not have run", s.spec.Name)
	}
	out := result(res)
	if res.IsError {
		return tools.Result{}, tools.ErrorResult(out)
	}
	return out, nil
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

// headers adds fixed headers to every request.
type headers struct {
	next http.RoundTripper
	h    http.Header
}

func (t headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.next.RoundTrip(r)
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}
