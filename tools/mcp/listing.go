package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentloop/agentloop/tools"
)

// listedTool is what the Toolset keeps of a listed tool: only what it
// offers the model, or why it is left out.
type listedTool struct {
	name, title, description string
	schema                   []byte
	err                      error // why the tool is left out
}

// list lists the server's tools, page by page, within the Limits: past a
// bound it keeps what came first and notes what it left out (s.cut).
func (s *server) list(ctx context.Context) error {
	session, _, err := s.current(ctx)
	if err != nil {
		return err
	}
	lim := s.ts.opts.Limits
	var (
		listed []listedTool
		cut    error
		cursor string
	)
	for page := 1; ; page++ {
		if page > lim.MaxPages {
			cut = fmt.Errorf("mcp: server %q named a page of tools past the %d read (Limits.MaxPages); the tools of those pages are kept", s.spec.Name, lim.MaxPages)
			break
		}
		res, err := session.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			if size, ok := tooLarge(err); ok {
				cut = fmt.Errorf("mcp: server %q sent page %d of its tools in %d bytes, more than the %d allowed (Limits.MaxMessageBytes); the tools of the pages before it are kept", s.spec.Name, page, size, lim.MaxMessageBytes)
				break
			}
			return fmt.Errorf("mcp: server %q: listing tools: %w%s", s.spec.Name, err, s.ended())
		}
		for _, t := range res.Tools {
			if t == nil {
				continue
			}
			if len(listed) == lim.MaxTools {
				cut = fmt.Errorf("mcp: server %q lists more than %d tools (Limits.MaxTools); the first %d are kept", s.spec.Name, lim.MaxTools, lim.MaxTools)
				break
			}
			listed = append(listed, s.keep(t))
		}
		if size, dropped, ok := pageCut(res.Meta); ok && cut == nil {
			cut = fmt.Errorf("mcp: server %q sent page %d of its tools in %d bytes, more than the %d allowed (Limits.MaxMessageBytes); the %d tools after the first %d of the page are left out, and the pages after it", s.spec.Name, page, size, lim.MaxMessageBytes, dropped, len(res.Tools))
		}
		if cut != nil || res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	s.mu.Lock()
	s.tools, s.cut = listed, cut
	s.mu.Unlock()
	return nil
}

// keep makes a listedTool of t, leaving it out when it is past
// Limits.MaxToolBytes or has no name.
func (s *server) keep(t *sdk.Tool) listedTool {
	lt := listedTool{name: t.Name}
	if t.Name == "" {
		lt.err = errors.New("mcp: the server listed a tool without a name")
		return lt
	}
	limit := s.ts.opts.Limits.MaxToolBytes
	if depth, ok := t.Meta[metaTooDeep].(float64); ok { // a stub (see idScanner)
		lt.name = shortName(t.Name)
		lt.err = fmt.Errorf("mcp: the definition of %q nests more than %d levels deep", lt.name, int64(depth))
		return lt
	}
	if size, ok := t.Meta[metaTooLarge].(float64); ok { // a stub (see idScanner)
		lt.name = shortName(t.Name)
		lt.err = fmt.Errorf("mcp: the definition of %q has %d bytes, more than the %d allowed (Limits.MaxToolBytes)", lt.name, int64(size), limit)
		return lt
	}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil || string(schema) == "null" {
		schema = []byte(`{"type":"object"}`)
	}
	if size := len(t.Name) + len(schema) + len(t.Description) + len(t.Title); size > limit {
		lt.name = shortName(t.Name) // it names the tool in Refused and the log
		lt.err = fmt.Errorf("mcp: the definition of %q has %d bytes, more than the %d allowed (Limits.MaxToolBytes)", lt.name, size, limit)
		return lt
	}
	lt.title, lt.description, lt.schema = t.Title, t.Description, schema
	return lt
}

// relist lists the tools again in the background (the server said they
// changed, or the connection was made again) and rebuilds the set. At
// most one listing per server runs; notifications that arrive meanwhile
// make it list once more when it is done, however many they are.
func (s *server) relist() {
	ts := s.ts
	s.mu.Lock()
	defer s.mu.Unlock()
	if ts.ctx.Err() != nil {
		return
	}
	if s.relisting {
		s.again = true
		return
	}
	s.relisting = true
	ts.relists.Add(1)
	go func() {
		defer ts.relists.Done()
		for {
			ctx, cancel := context.WithTimeout(ts.ctx, ts.opts.Limits.ListTimeout)
			err := s.list(ctx)
			cancel()
			if err != nil {
				if ts.ctx.Err() == nil { // not closing
					ts.opts.Logger.Warn("mcp: listing tools again failed", "server", s.spec.Name, "err", err)
				}
			} else {
				ts.rebuild()
			}
			s.mu.Lock()
			if !s.again || ts.ctx.Err() != nil {
				s.relisting, s.again = false, false
				s.mu.Unlock()
				return
			}
			s.again = false
			s.mu.Unlock()
		}
	}()
}

func (s *server) listed() ([]listedTool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools, s.cut
}

// tool makes a tools.Tool of a listed tool, exposed under name.
func (s *server) tool(t listedTool, name string) (*tools.Tool, error) {
	remote := t.name
	return tools.NewJSON(tools.Config{Name: name, Description: t.description, Label: t.title, Timeout: s.spec.ToolTimeout},
		t.schema, func(ctx context.Context, args map[string]any) (tools.Result, error) {
			return s.call(ctx, remote, args)
		})
}

// shortName is a tool's name cut for messages: at most 64 bytes and
// "...".
func shortName(name string) string {
	if len(name) <= maxName {
		return name
	}
	return strings.ToValidUTF8(name[:maxName], "") + "..."
}

// pageCut reports the mark of a page reduced to Limits.MaxMessageBytes
// (see idScanner): its size, and the tools left out of it.
func pageCut(meta sdk.Meta) (size int64, dropped int, ok bool) {
	m, ok := meta[metaCut].(map[string]any)
	if !ok {
		return 0, 0, false
	}
	s, _ := m["size"].(float64)
	d, _ := m["dropped"].(float64)
	return int64(s), int(d), true
}
