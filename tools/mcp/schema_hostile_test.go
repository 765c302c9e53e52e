package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// TestHostileSchemas plays a hostile server: tools whose input schemas
// would make validation recurse without end (cycles through every form of
// reference), fetch a remote schema, or go deeper than a check may. Each
// is left out, with the reason in Refused; the server's other tools work,
// and a call to a recursive tool with arguments nested too deeply for its
// chain of references fails with tools.CheckLimitText, without reaching
// the server. All in this test process: a stack overflow would kill it.
func TestHostileSchemas(t *testing.T) {
	chain := func(n int) string { // p refers to a0, a0 to a1, ...
		var b strings.Builder
		b.WriteString(`{"type":"object","properties":{"p":{"$ref":"#/$defs/a0"}},"$defs":{`)
		for i := range n {
			fmt.Fprintf(&b, `"a%d":{"$ref":"#/$defs/a%d"},`, i, i+1)
		}
		fmt.Fprintf(&b, `"a%d":{}}}`, n)
		return b.String()
	}
	hostile := map[string]string{
		"percent":  `{"type":"object","properties":{"p":{"$ref":"#/properties/%70"}}}`,
		"urn":      `{"type":"object","properties":{"p":{"$ref":"urn:x"}},"$defs":{"x":{"$id":"urn:x","$ref":"urn:x"}}}`,
		"anchor":   `{"type":"object","properties":{"p":{"$ref":"#x"}},"$defs":{"x":{"$anchor":"x","not":{"$ref":"#x"}}}}`,
		"dynamic":  `{"type":"object","properties":{"p":{"$ref":"#/$defs/x"}},"$defs":{"x":{"$dynamicAnchor":"x","$dynamicRef":"#x"}}}`,
		"draft07":  `{"type":"object","properties":{"p":{"$ref":"#/definitions/a"}},"definitions":{"a":{"allOf":[{"$ref":"#/definitions/a"}]}}}`,
		"escapes":  `{"type":"object","properties":{"a/b~":{"$ref":"#/properties/a~1b~0"}}}`,
		"nilref":   `{"type":"object","properties":{"p":{"$ref":"#/not"}}}`,
		"remote":   `{"type":"object","properties":{"p":{"$ref":"https://example.com/schema.json"}}}`,
		"chain":    chain(5000),
		"nested":   strings.Replace(chain(200), `{"$ref":"#/$defs/a0"}`, strings.Repeat(`{"not":`, 900)+`{"$ref":"#/$defs/a0"}`+strings.Repeat(`}`, 900), 1),
		"doubling": `{"type":"object","properties":{"p":{"$ref":"#/$defs/a"}},"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"},{"$ref":"#/$defs/b"}]},"b":{"anyOf":[{"$ref":"#/$defs/c"},{"$ref":"#/$defs/c"}]},"c":{"anyOf":[{"$ref":"#/$defs/d"},{"$ref":"#/$defs/d"}]},"d":{"anyOf":[{"$ref":"#/$defs/e"},{"$ref":"#/$defs/e"}]},"e":{"anyOf":[{"$ref":"#/$defs/f"},{"$ref":"#/$defs/f"}]},"f":{"anyOf":[{"$ref":"#/$defs/g"},{"$ref":"#/$defs/g"}]},"g":{"anyOf":[{"$ref":"#/$defs/h"},{"$ref":"#/$defs/h"}]},"h":{"anyOf":[{"$ref":"#/$defs/i"},{"$ref":"#/$defs/i"}]},"i":{"anyOf":[{"$ref":"#/$defs/j"},{"$ref":"#/$defs/j"}]},"j":{"anyOf":[{"$ref":"#/$defs/k"},{"$ref":"#/$defs/k"}]},"k":{}}}`,
	}
	s := newTestServer()
	var calls atomic.Int32
	h := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		calls.Add(1)
		return text("ran"), nil
	}
	for name, schema := range hostile {
		s.add(name, schema, h)
	}
	// A legitimate recursive schema, each level reached through a chain of
	// 20 references: 40 levels check, 60 do not.
	var rec strings.Builder
	rec.WriteString(`{"type":"object","properties":{"c":{"$ref":"#/$defs/l0"}},"$defs":{`)
	for i := range 20 {
		fmt.Fprintf(&rec, `"l%d":{"$ref":"#/$defs/l%d"},`, i, i+1)
	}
	rec.WriteString(`"l20":{"type":"object","properties":{"c":{"$ref":"#/$defs/l0"}}}}}`)
	s.add("tree", rec.String(), h)
	ts := connect(t, Options{}, Server{Name: "evil", Dial: s.dial})

	set, _ := ts.Tools()
	if len(set) != 1 || set[0].Name() != "tree" {
		var names []string
		for _, tl := range set {
			names = append(names, tl.Name())
		}
		t.Fatalf("offered %v, want only tree", names)
	}
	refused := ts.Refused()
	for name := range hostile {
		if err := refused["evil/"+name]; err == nil {
			t.Errorf("%s: not refused", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	nest := func(n int) map[string]any {
		v := map[string]any{}
		for range n - 1 {
			v = map[string]any{"c": v}
		}
		return v
	}
	msgs, _ := run(t, ts,
		faux.Reply(faux.Call("deep", "tree", nest(60)), faux.Call("fine", "tree", nest(40))),
		faux.Reply(faux.Text("done")))
	if got, isErr := resultText(t, msgs, "deep"); !isErr || got != tools.CheckLimitText {
		t.Errorf("deep call: %q (error %v)", got, isErr)
	}
	if got, isErr := resultText(t, msgs, "fine"); isErr || got != "ran" {
		t.Errorf("fine call: %q (error %v)", got, isErr)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the server ran %d calls, want 1", n)
	}
}
