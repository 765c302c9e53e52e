package schema

import (
	"encoding/json"
	"testing"
)

// compileJSON reads and compiles a hand-written schema as a tool built
// from it would have it.
func compileJSON(raw json.RawMessage) (*Schema, error) {
	s, _, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	s.Schema, s.ID = "", ""
	return Compile(s)
}

// mustCompile is compileJSON for schemas that must compile.
func mustCompile(t testing.TB, raw string) *Schema {
	t.Helper()
	s, err := compileJSON(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return s
}

// checkCopy is Check followed by a deep copy: the checked arguments as a
// value of their own, for tests of any JSON value.
func (s *Schema) checkCopy(args any) (any, error) {
	v, err := s.Check(args)
	if err != nil {
		return nil, err
	}
	return clone(v), nil
}

// benchSchema is an ordinary tool's schema.
const benchSchema = `{"type":"object","properties":{"path":{"type":"string"},"line":{"type":"integer"},"mode":{"type":"string","enum":["r","w"]},"force":{"type":"boolean"}},"required":["path","line"]}`
